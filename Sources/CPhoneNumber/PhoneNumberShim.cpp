// A plain C interface over libphonenumber, so that no C++ type crosses into Swift.
#include "CPhoneNumber.h"
#include "NumberTypeTables.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <phonenumbers/phonemetadata.pb.h>
#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneMetadataCollection;
using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

// The metadata libphonenumber itself parses at start (exported, without a header).
namespace i18n {
namespace phonenumbers {
int metadata_size();
const void *metadata_get();
}  // namespace phonenumbers
}  // namespace i18n

static rg_phone_type map_type(PhoneNumberUtil::PhoneNumberType type) {
    switch (type) {
    case PhoneNumberUtil::FIXED_LINE: return RG_PHONE_TYPE_FIXED_LINE;
    case PhoneNumberUtil::MOBILE: return RG_PHONE_TYPE_MOBILE;
    case PhoneNumberUtil::FIXED_LINE_OR_MOBILE: return RG_PHONE_TYPE_FIXED_LINE_OR_MOBILE;
    case PhoneNumberUtil::TOLL_FREE: return RG_PHONE_TYPE_TOLL_FREE;
    case PhoneNumberUtil::PREMIUM_RATE: return RG_PHONE_TYPE_PREMIUM_RATE;
    case PhoneNumberUtil::SHARED_COST: return RG_PHONE_TYPE_SHARED_COST;
    case PhoneNumberUtil::VOIP: return RG_PHONE_TYPE_VOIP;
    case PhoneNumberUtil::PERSONAL_NUMBER: return RG_PHONE_TYPE_PERSONAL_NUMBER;
    case PhoneNumberUtil::PAGER: return RG_PHONE_TYPE_PAGER;
    case PhoneNumberUtil::UAN: return RG_PHONE_TYPE_UAN;
    case PhoneNumberUtil::VOICEMAIL: return RG_PHONE_TYPE_VOICEMAIL;
    default: return RG_PHONE_TYPE_UNKNOWN;
    }
}

static bool has_visible_character(const std::string &text) {
    for (unsigned char c : text) {
        if (c != ' ' && c != '\t') return true;
    }
    return false;
}

static bool has_plus_sign(const std::string &text) {
    // ASCII '+' or the full-width plus sign U+FF0B (EF BC 8B in UTF-8).
    return text.find('+') != std::string::npos || text.find("\xEF\xBC\x8B") != std::string::npos;
}

static rg_phone_status fill(const PhoneNumberUtil &util, const PhoneNumber &number,
                            PhoneNumberUtil::PhoneNumberType type, rg_phone_result *out);

// libphonenumber's full parse: every spelling, every check.
static rg_phone_status parse_full(const char *input, size_t len, const char *default_region,
                                  rg_phone_result *out) {
    if (input == nullptr || out == nullptr) return RG_PHONE_INTERNAL;
    std::memset(out, 0, sizeof(*out));
    std::string text(input, len);
    if (!has_visible_character(text)) return RG_PHONE_EMPTY;

    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    const std::string region = default_region ? default_region : "ZZ";
    PhoneNumber number;
    switch (util.Parse(text, region, &number)) {
    case PhoneNumberUtil::NO_PARSING_ERROR: break;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR:
        // With a leading plus the caller gave a country code, and it is unknown;
        // without one, the number needed a default region.
        return (default_region || has_plus_sign(text)) ? RG_PHONE_INVALID_COUNTRY_CODE : RG_PHONE_MISSING_REGION;
    case PhoneNumberUtil::NOT_A_NUMBER: return RG_PHONE_NOT_A_NUMBER;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD:
    case PhoneNumberUtil::TOO_SHORT_NSN: return RG_PHONE_TOO_SHORT;
    case PhoneNumberUtil::TOO_LONG_NSN: return RG_PHONE_TOO_LONG;
    default: return RG_PHONE_NOT_A_NUMBER;
    }

    // GetNumberType returns UNKNOWN exactly when IsValidNumber is false (both match
    // the national number against the region's patterns), so one call does both and
    // saves a third of a parse. Only an invalid number pays for the reason why.
    const PhoneNumberUtil::PhoneNumberType type = util.GetNumberType(number);
    if (type == PhoneNumberUtil::UNKNOWN) {
        switch (util.IsPossibleNumberWithReason(number)) {
        case PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY: return RG_PHONE_TOO_SHORT;
        case PhoneNumberUtil::INVALID_COUNTRY_CODE: return RG_PHONE_INVALID_COUNTRY_CODE;
        case PhoneNumberUtil::TOO_SHORT: return RG_PHONE_TOO_SHORT;
        case PhoneNumberUtil::TOO_LONG: return RG_PHONE_TOO_LONG;
        default: return RG_PHONE_INVALID_FOR_REGION;
        }
    }

    return fill(util, number, type, out);
}

static rg_phone_status fill(const PhoneNumberUtil &util, const PhoneNumber &number,
                            PhoneNumberUtil::PhoneNumberType type, rg_phone_result *out) {
    std::string e164;
    util.Format(number, PhoneNumberUtil::E164, &e164);
    std::string found_region;
    util.GetRegionCodeForNumber(number, &found_region);
    if (e164.size() >= sizeof(out->e164) || found_region.size() >= sizeof(out->region)) {
        return RG_PHONE_INTERNAL;
    }
    std::memcpy(out->e164, e164.data(), e164.size());
    std::memcpy(out->region, found_region.data(), found_region.size());
    out->type = map_type(type);
    out->country_code = number.country_code();
    return RG_PHONE_OK;
}

// ---- The E.164 fast path --------------------------------------------------------------
//
// Most callers send numbers already in E.164 ("+8613800138000"). For such input
// libphonenumber's Parse only (1) splits off the calling code, (2) strips a national
// prefix or carrier code when the region's national_prefix_for_parsing matches at the
// start of the rest, and (3) marks Italian leading zeros; the rest of its work (finding
// the number in free text, extensions, IDD prefixes) cannot apply. The fast path builds
// the number directly and falls back to the full parse whenever (2) or (3) could apply:
// when any region of the calling code has a national prefix pattern that matches at the
// start, or the rest starts with 0. A number the fast path finds invalid also takes the
// full parse, for its exact reason. rg_phone_self_check compares the two paths.

namespace {
struct PrefixPatterns {
    std::map<int, std::vector<std::regex>> by_calling_code;
    bool ready = false;
};

// Built once and never freed, like the type tables: a static with a destructor is torn
// down by exit() while another thread may still be inside a parse, and `resendgate send`
// crashed there about once in 400 runs (munmap_chunk(): invalid pointer).
const PrefixPatterns &prefix_patterns() {
    static PrefixPatterns &patterns = *new PrefixPatterns;
    static std::once_flag once;
    std::call_once(once, [] {
        PhoneMetadataCollection collection;
        if (!collection.ParseFromArray(i18n::phonenumbers::metadata_get(), i18n::phonenumbers::metadata_size())) {
            return;  // not ready: every number takes the full parse
        }
        for (int i = 0; i < collection.metadata_size(); ++i) {
            const auto &metadata = collection.metadata(i);
            auto &list = patterns.by_calling_code[metadata.country_code()];
            if (!metadata.has_national_prefix_for_parsing()) continue;
            try {
                list.emplace_back(metadata.national_prefix_for_parsing(), std::regex::ECMAScript | std::regex::optimize);
            } catch (const std::regex_error &) {
                // A pattern we cannot read: treat every number of this code as needing
                // the full parse, with a pattern that matches anything.
                list.emplace_back("");
            }
        }
        // Without the type tables every number takes the full parse too.
        patterns.ready = resendgate::number_type_tables_ready(collection);
    });
    return patterns;
}
}  // namespace

// 1: the fast path decided (out filled); 0: take the full parse.
static int parse_e164_fast(const char *input, size_t len, rg_phone_result *out) {
    if (len < 9 || len > 16 || input[0] != '+') return 0;
    // No calling code starts with 0: "+014155552671" is not +1 415..., and libphonenumber
    // refuses it (stoi below would read "01" as 1 and give the number a second key).
    if (input[1] == '0') return 0;
    for (size_t i = 1; i < len; ++i) {
        if (input[i] < '0' || input[i] > '9') return 0;
    }
    const PrefixPatterns &patterns = prefix_patterns();
    if (!patterns.ready) return 0;
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    for (size_t code_length = 1; code_length <= 3; ++code_length) {
        const int code = std::stoi(std::string(input + 1, code_length));
        std::string region;
        util.GetRegionCodeForCountryCode(code, &region);
        if (region == "ZZ") continue;  // not a calling code; codes are prefix-free
        const std::string national(input + 1 + code_length, len - 1 - code_length);
        if (national.size() < 2 || national[0] == '0') return 0;
        const auto found = patterns.by_calling_code.find(code);
        if (found == patterns.by_calling_code.end()) return 0;
        for (const std::regex &prefix : found->second) {
            if (std::regex_search(national, prefix, std::regex_constants::match_continuous)) return 0;
        }
        const resendgate::NumberTypeDecision decided = resendgate::decide_number_type(code, national);
        if (decided.type == PhoneNumberUtil::UNKNOWN) return 0;
        std::memset(out, 0, sizeof(*out));
        // E.164 is "+", the code and the national number, built from what was read (never
        // the input copied); the rest is what libphonenumber's GetRegionCodeForNumber and
        // GetNumberType would say (see NumberTypeTables.hpp).
        const std::string e164 = "+" + std::to_string(code) + national;
        if (e164.size() >= sizeof(out->e164) || decided.region.size() >= sizeof(out->region)) return 0;
        std::memcpy(out->e164, e164.data(), e164.size());
        std::memcpy(out->region, decided.region.data(), decided.region.size());
        out->type = map_type(decided.type);
        out->country_code = code;
        return 1;
    }
    return 0;
}

// libphonenumber's parse is not always a fixed point: it strips a national prefix from
// "+52 1 1 444 864 1375" to give +5214448641375, whose own parse strips another 1 and
// gives +524448641375, both valid. Two spellings of one subscriber would then get two
// keys. So a full parse's result is parsed again until it no longer changes (the fast
// path's results are fixed points by construction: the same input takes it again).
extern "C" rg_phone_status rg_phone_parse(const char *input, size_t len, const char *default_region,
                                          rg_phone_result *out) {
    if (input != nullptr && out != nullptr && parse_e164_fast(input, len, out)) return RG_PHONE_OK;
    rg_phone_status status = parse_full(input, len, default_region, out);
    for (int round = 0; status == RG_PHONE_OK && round < 4; ++round) {
        rg_phone_result again{};
        const std::string e164(out->e164);
        if (!parse_e164_fast(e164.data(), e164.size(), &again) &&
            parse_full(e164.data(), e164.size(), nullptr, &again) != RG_PHONE_OK) {
            break;  // its own E.164 does not parse: keep the first answer
        }
        if (std::strcmp(again.e164, out->e164) == 0) break;
        *out = again;
    }
    return status;
}

// libphonenumber alone, with the same fixed-point rule as rg_phone_parse: what the fast
// path must agree with.
static rg_phone_status parse_full_fixed(const char *input, size_t len, const char *default_region, rg_phone_result *out) {
    rg_phone_status status = parse_full(input, len, default_region, out);
    for (int round = 0; status == RG_PHONE_OK && round < 4; ++round) {
        rg_phone_result again{};
        const std::string e164(out->e164);
        if (parse_full(e164.data(), e164.size(), nullptr, &again) != RG_PHONE_OK) break;
        if (std::strcmp(again.e164, out->e164) == 0) break;
        *out = again;
    }
    return status;
}

extern "C" rg_phone_status rg_phone_parse_full(const char *input, size_t len, const char *default_region,
                                               rg_phone_result *out) {
    return parse_full_fixed(input, len, default_region, out);
}

extern "C" int rg_phone_parse_e164(const char *input, size_t len, rg_phone_result *out) {
    return input != nullptr && out != nullptr && parse_e164_fast(input, len, out);
}

extern "C" int rg_phone_is_known_region(const char *region) {
    if (region == nullptr) return 0;
    std::set<std::string> regions;
    PhoneNumberUtil::GetInstance()->GetSupportedRegions(&regions);
    return regions.count(region) ? 1 : 0;
}
