#include "NumberTypeTables.hpp"

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include <unicode/regex.h>
#include <unicode/unistr.h>

namespace resendgate {
namespace {

using i18n::phonenumbers::PhoneMetadata;
using i18n::phonenumbers::PhoneMetadataCollection;
using i18n::phonenumbers::PhoneNumberDesc;
using i18n::phonenumbers::PhoneNumberUtil;

/// One PhoneNumberDesc: its possible national lengths and its pattern.
struct Desc {
    bool any_length = true;    // no possible lengths listed: the general desc already decided
    uint32_t length_mask = 0;  // bit n: length n is possible
    int pattern = -1;          // index in Tables::patterns; -1: empty, never matches
};

/// One region's metadata, in the order GetNumberTypeHelper reads it.
struct Region {
    std::string id;
    Desc general, premium_rate, toll_free, shared_cost, voip, personal_number, pager, uan, voicemail, fixed_line,
        mobile;
    bool same_mobile_and_fixed_line_pattern = false;
    int leading_digits = -1;  // pattern index, or -1 when the region has none
};

struct Tables {
    std::vector<icu::UnicodeString> patterns;  // each distinct pattern once
    std::deque<Region> regions;  // stable addresses for by_code
    std::unordered_map<int, std::vector<const Region *>> by_code;
    bool ready = false;
};

/// Built once and never freed: matchers of other threads may outlive static destruction.
Tables *const tables = new Tables;
std::once_flag tables_once;

class Builder {
public:
    explicit Builder(Tables &tables) : tables_(tables) {}

    int pattern(const std::string &text) {
        if (text.empty()) return -1;
        const auto found = ids_.find(text);
        if (found != ids_.end()) return found->second;
        const int id = static_cast<int>(tables_.patterns.size());
        // The conversion libphonenumber's ICU adapter uses (IcuRegExp).
        tables_.patterns.push_back(icu::UnicodeString::fromUTF8(text));
        ids_.emplace(text, id);
        return id;
    }

    Desc desc(const PhoneNumberDesc &source) {
        Desc result;
        result.any_length = source.possible_length_size() == 0;
        for (const int length : source.possible_length()) {
            if (length >= 0 && length < 32) result.length_mask |= 1u << length;
        }
        result.pattern = pattern(source.national_number_pattern());
        return result;
    }

    const Region *region(const std::string &id, const PhoneMetadata &metadata) {
        Region &region = tables_.regions.emplace_back();
        region.id = id;
        region.general = desc(metadata.general_desc());
        region.premium_rate = desc(metadata.premium_rate());
        region.toll_free = desc(metadata.toll_free());
        region.shared_cost = desc(metadata.shared_cost());
        region.voip = desc(metadata.voip());
        region.personal_number = desc(metadata.personal_number());
        region.pager = desc(metadata.pager());
        region.uan = desc(metadata.uan());
        region.voicemail = desc(metadata.voicemail());
        region.fixed_line = desc(metadata.fixed_line());
        region.mobile = desc(metadata.mobile());
        region.same_mobile_and_fixed_line_pattern = metadata.same_mobile_and_fixed_line_pattern();
        if (metadata.has_leading_digits()) region.leading_digits = pattern(metadata.leading_digits());
        return &region;
    }

private:
    Tables &tables_;
    std::unordered_map<std::string, int> ids_;
};

void build(const PhoneMetadataCollection &collection) {
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    std::map<std::string, const PhoneMetadata *> geographic;
    std::map<int, const PhoneMetadata *> non_geographic;
    for (const PhoneMetadata &metadata : collection.metadata()) {
        if (metadata.id() == "001") {
            non_geographic[metadata.country_code()] = &metadata;
        } else {
            geographic[metadata.id()] = &metadata;
        }
    }
    Builder builder(*tables);
    std::set<int> codes;
    util.GetSupportedCallingCodes(&codes);
    for (const int code : codes) {
        // libphonenumber's own region order for the code: the first that claims a number wins.
        std::list<std::string> ids;
        util.GetRegionCodesForCountryCallingCode(code, &ids);
        auto &list = tables->by_code[code];
        for (const std::string &id : ids) {
            const PhoneMetadata *metadata = nullptr;
            if (id == "001") {
                const auto found = non_geographic.find(code);
                if (found != non_geographic.end()) metadata = found->second;
            } else {
                const auto found = geographic.find(id);
                if (found != geographic.end()) metadata = found->second;
            }
            if (metadata == nullptr) return;  // not ready: libphonenumber decides everything
            list.push_back(builder.region(id, *metadata));
        }
    }
    tables->ready = true;
}

/// This thread's matchers, each compiled on first use of its pattern (so memory follows
/// the regions a server sees, and no two threads share ICU state), and their input.
struct ThreadMatchers {
    icu::UnicodeString input;  // first, so that it outlives the matchers that read it
    std::vector<std::unique_ptr<icu::RegexMatcher>> matchers;
    bool failed = false;  // a matcher could not be made: the decision is not trusted
};
thread_local ThreadMatchers local;

bool match(int pattern, bool whole) {
    if (pattern < 0) return false;
    if (local.matchers.size() < tables->patterns.size()) local.matchers.resize(tables->patterns.size());
    std::unique_ptr<icu::RegexMatcher> &matcher = local.matchers[pattern];
    UErrorCode status = U_ZERO_ERROR;
    if (!matcher) {
        // The flags libphonenumber's ICU adapter compiles with (none).
        matcher = std::make_unique<icu::RegexMatcher>(tables->patterns[pattern], 0, status);
        if (U_FAILURE(status)) {
            matcher.reset();
            local.failed = true;
            return false;
        }
    }
    matcher->reset(local.input);
    const bool matched = whole ? matcher->matches(status) : matcher->lookingAt(status);
    if (U_FAILURE(status)) local.failed = true;
    return matched && U_SUCCESS(status);
}

// PhoneNumberUtil::IsNumberMatchingDesc.
bool matches(const Desc &desc, size_t length) {
    if (!desc.any_length && (length >= 32 || !(desc.length_mask & (1u << length)))) return false;
    return match(desc.pattern, true);
}

// PhoneNumberUtil::GetNumberTypeHelper, in its order.
PhoneNumberUtil::PhoneNumberType type_of(const Region &region, size_t length) {
    if (!matches(region.general, length)) return PhoneNumberUtil::UNKNOWN;
    if (matches(region.premium_rate, length)) return PhoneNumberUtil::PREMIUM_RATE;
    if (matches(region.toll_free, length)) return PhoneNumberUtil::TOLL_FREE;
    if (matches(region.shared_cost, length)) return PhoneNumberUtil::SHARED_COST;
    if (matches(region.voip, length)) return PhoneNumberUtil::VOIP;
    if (matches(region.personal_number, length)) return PhoneNumberUtil::PERSONAL_NUMBER;
    if (matches(region.pager, length)) return PhoneNumberUtil::PAGER;
    if (matches(region.uan, length)) return PhoneNumberUtil::UAN;
    if (matches(region.voicemail, length)) return PhoneNumberUtil::VOICEMAIL;
    if (matches(region.fixed_line, length)) {
        if (region.same_mobile_and_fixed_line_pattern || matches(region.mobile, length)) {
            return PhoneNumberUtil::FIXED_LINE_OR_MOBILE;
        }
        return PhoneNumberUtil::FIXED_LINE;
    }
    if (!region.same_mobile_and_fixed_line_pattern && matches(region.mobile, length)) return PhoneNumberUtil::MOBILE;
    return PhoneNumberUtil::UNKNOWN;
}

}  // namespace

bool number_type_tables_ready(const PhoneMetadataCollection &collection) {
    std::call_once(tables_once, [&] { build(collection); });
    return tables->ready;
}

NumberTypeDecision decide_number_type(int calling_code, const std::string &national) {
    NumberTypeDecision decision;
    decision.region = "ZZ";
    const auto found = tables->by_code.find(calling_code);
    if (found == tables->by_code.end() || found->second.empty()) return decision;
    local.input = icu::UnicodeString(national.data(), static_cast<int32_t>(national.size()), US_INV);
    local.failed = false;
    const size_t length = national.size();
    const std::vector<const Region *> &regions = found->second;

    // PhoneNumberUtil::GetRegionCodeForNumber(FromRegionList), then GetNumberType.
    const Region *claimed = nullptr;
    bool typed = false;
    if (regions.size() == 1) {
        claimed = regions.front();
    } else {
        for (const Region *region : regions) {
            if (region->leading_digits >= 0) {
                if (match(region->leading_digits, false)) {
                    claimed = region;
                    break;
                }
            } else if ((decision.type = type_of(*region, length)) != PhoneNumberUtil::UNKNOWN) {
                claimed = region;
                typed = true;
                break;
            }
        }
    }
    if (claimed == nullptr) return decision;
    if (!typed) decision.type = type_of(*claimed, length);
    decision.region = claimed->id;
    if (local.failed) decision.type = PhoneNumberUtil::UNKNOWN;  // not trusted: the full parse decides
    return decision;
}

}  // namespace resendgate
