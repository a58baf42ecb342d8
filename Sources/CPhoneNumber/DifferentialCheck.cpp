// The checks of the fast path against libphonenumber alone: rg_phone_parse (fast path,
// then libphonenumber) on inputs spelled around every calling code
// (rg_phone_differential_check), and the fast path alone on random E.164 spellings
// (rg_phone_self_check); see CPhoneNumber.h. Test helpers, not on any request path.
#include "CPhoneNumber.h"

#include <cstdio>
#include <cstring>
#include <list>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

namespace {

struct Checker {
    long mismatches = 0;
    long compared = 0;
    char *first = nullptr;
    size_t capacity = 0;

    void record(const std::string &what) {
        if (mismatches == 0 && first != nullptr && capacity > 0) std::snprintf(first, capacity, "%s", what.c_str());
        ++mismatches;
    }

    // rg_phone_parse and libphonenumber alone agree on `text`: status, and the result.
    rg_phone_status agree(const std::string &text, const char *region, rg_phone_result *result) {
        rg_phone_result ours{}, theirs{};
        const rg_phone_status status = rg_phone_parse(text.data(), text.size(), region, &ours);
        const rg_phone_status expected = rg_phone_parse_full(text.data(), text.size(), region, &theirs);
        ++compared;
        const bool same = status == expected &&
            (status != RG_PHONE_OK || (std::strcmp(ours.e164, theirs.e164) == 0 && std::strcmp(ours.region, theirs.region) == 0 &&
                                       ours.type == theirs.type && ours.country_code == theirs.country_code));
        if (!same) {
            record(text + " [" + (region ? region : "none") + "]: parse " + std::to_string(status) + " " + ours.e164 +
                   ", libphonenumber " + std::to_string(expected) + " " + theirs.e164);
        }
        *result = ours;
        return status;
    }

    void agree(const std::string &text, const char *region) {
        rg_phone_result ignored{};
        agree(text, region, &ignored);
    }

    // `text` is a spelling of the number whose key is `key`.
    void sameKey(const std::string &text, const char *region, const std::string &key) {
        rg_phone_result result{};
        const rg_phone_status status = agree(text, region, &result);
        if (status != RG_PHONE_OK || key != result.e164) {
            record(text + " [" + (region ? region : "none") + "]: status " + std::to_string(status) + " key " + result.e164 +
                   ", not " + key);
        }
    }

    // `text` must be refused (a leading zero before the calling code).
    void refused(const std::string &text, const char *region) {
        rg_phone_result result{};
        if (agree(text, region, &result) == RG_PHONE_OK) {
            record(text + " [" + (region ? region : "none") + "]: accepted as " + result.e164);
        }
    }
};

// `digits` with each ASCII digit replaced by the UTF-8 of the digit `zero` + d.
std::string withDigits(const std::string &digits, unsigned zero) {
    std::string out;
    for (char c : digits) {
        if (c < '0' || c > '9') {
            out += c;
            continue;
        }
        const unsigned code = zero + static_cast<unsigned>(c - '0');
        if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }
    return out;
}

// `nsn` cut into groups of three or four joined by `separator`.
std::string grouped(const std::string &nsn, const std::string &separator) {
    std::string out;
    for (size_t at = 0; at < nsn.size(); at += (at == 0 ? 3 : 4)) {
        if (at > 0) out += separator;
        out += nsn.substr(at, at == 0 ? 3 : 4);
    }
    return out;
}

void checkNumber(Checker &check, const PhoneNumberUtil &util, const PhoneNumber &example, const std::string &region,
                 std::mt19937 &random) {
    std::string e164;
    util.Format(example, PhoneNumberUtil::E164, &e164);
    const std::string code = std::to_string(example.country_code());
    if (e164.size() < 1 + code.size() + 2) return;
    const std::string nsn = e164.substr(1 + code.size());
    const char *own = region == "001" ? nullptr : region.c_str();

    // Input of the fast path's shape ("+" and digits), right and wrong: the two must agree.
    std::vector<std::string> shaped = {
        "+" + code + nsn, "+0" + code + nsn, "+00" + code + nsn, "+000" + code + nsn, "+" + code + "0" + nsn,
        "+" + code + "00" + nsn, "+" + code + "1" + nsn, "+" + code + "8" + nsn, "+" + code + "9" + nsn,
        "+" + code + nsn.substr(0, nsn.size() - 1), "+" + code + nsn + "5", "+" + code + nsn + "55",
        "+" + code.substr(1) + nsn, "+" + code + nsn.substr(1),
    };
    for (int k = 0; k < 4; ++k) {
        std::string changed = "+" + code + nsn;
        changed[1 + code.size() + random() % nsn.size()] = static_cast<char>('0' + random() % 10);
        shaped.push_back(changed);
    }
    for (const std::string &text : shaped) {
        check.agree(text, nullptr);
        if (own) check.agree(text, own);
    }
    // A zero before the calling code names no number (finding 1 of attack round 3).
    for (const std::string &text : {"+0" + code + nsn, "+00" + code + nsn, "+0" + code + " " + nsn}) check.refused(text, nullptr);

    // Spellings of this number: each must give its key.
    rg_phone_result canonical{};
    if (rg_phone_parse(e164.data(), e164.size(), nullptr, &canonical) != RG_PHONE_OK) return;
    const std::string key = canonical.e164;
    std::string international, national;
    util.Format(example, PhoneNumberUtil::INTERNATIONAL, &international);
    util.Format(example, PhoneNumberUtil::NATIONAL, &national);
    const std::vector<std::string> spellings = {
        "+" + code + " " + nsn, "+" + code + " " + grouped(nsn, " "), "+" + code + "-" + grouped(nsn, "-"),
        "+" + code + "." + grouped(nsn, "."), "+" + code + " (" + nsn.substr(0, 2) + ") " + nsn.substr(2),
        "+" + code + "\xC2\xA0" + nsn, international, "\xEF\xBC\x8B" + withDigits(code + nsn, 0xFF10),
        "+" + withDigits(code + " " + nsn, 0x0660), "+" + withDigits(code + nsn, 0x06F0),
    };
    for (const std::string &text : spellings) check.sameKey(text, nullptr, key);
    // International dialling prefixes: 00 from Germany, 011 from the United States.
    check.sameKey("00" + code + nsn, "DE", key);
    check.sameKey("00 " + code + " " + nsn, "DE", key);
    check.sameKey("011" + code + nsn, "US", key);
    // The national spelling (with its trunk prefix), read in the number's own region.
    if (own) check.sameKey(national, own, key);
}

}  // namespace

extern "C" long rg_phone_differential_check(unsigned seed, long *compared, char *first_mismatch, size_t capacity) {
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    Checker check;
    check.first = first_mismatch;
    check.capacity = capacity;
    std::mt19937 random(seed);
    std::set<int> codes;
    util.GetSupportedCallingCodes(&codes);
    const PhoneNumberUtil::PhoneNumberType types[] = {PhoneNumberUtil::MOBILE, PhoneNumberUtil::FIXED_LINE};
    for (int code : codes) {
        std::list<std::string> regions;
        util.GetRegionCodesForCountryCallingCode(code, &regions);
        for (const std::string &region : regions) {
            PhoneNumber example;
            if (region == "001") {
                if (util.GetExampleNumberForNonGeoEntity(code, &example)) checkNumber(check, util, example, region, random);
                continue;
            }
            for (PhoneNumberUtil::PhoneNumberType type : types) {
                if (util.GetExampleNumberForType(region, type, &example)) checkNumber(check, util, example, region, random);
            }
        }
    }
    if (compared) *compared = check.compared;
    return check.mismatches;
}

// The fast path alone against libphonenumber alone (with the fixed-point rule
// rg_phone_parse applies), on random E.164 spellings: see rg_phone_self_check.
extern "C" long rg_phone_self_check(long samples, unsigned seed, long *decided, char *first_mismatch, size_t capacity) {
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    std::set<int> codes;
    util.GetSupportedCallingCodes(&codes);
    std::vector<int> list(codes.begin(), codes.end());
    std::mt19937 random(seed);
    long mismatches = 0;
    if (decided) *decided = 0;
    for (long i = 0; i < samples; ++i) {
        // Half the samples start from an example number, so that many are valid.
        std::string text;
        const int code = list[random() % list.size()];
        std::string region;
        util.GetRegionCodeForCountryCode(code, &region);
        PhoneNumber example;
        if (i % 2 == 0 && util.GetExampleNumberForType(region, static_cast<PhoneNumberUtil::PhoneNumberType>(random() % 11), &example)) {
            util.Format(example, PhoneNumberUtil::E164, &text);
            if (text.size() > 4) {
                for (int k = 0; k < 2; ++k) text[text.size() - 1 - (random() % 4)] = static_cast<char>('0' + random() % 10);
            }
        } else {
            text = "+" + std::to_string(code);
            const int digits = 5 + random() % 11;
            for (int k = 0; k < digits; ++k) text += static_cast<char>('0' + random() % 10);
        }
        rg_phone_result fast{}, full{};
        const int decided_here = rg_phone_parse_e164(text.data(), text.size(), &fast);
        if (!decided_here) continue;
        if (decided) ++*decided;
        const rg_phone_status status = rg_phone_parse_full(text.data(), text.size(), nullptr, &full);
        if (status != RG_PHONE_OK || std::strcmp(fast.e164, full.e164) != 0 || std::strcmp(fast.region, full.region) != 0 ||
            fast.type != full.type || fast.country_code != full.country_code) {
            if (mismatches == 0 && first_mismatch && capacity > 0) {
                std::snprintf(first_mismatch, capacity, "%s: fast %s %s %d, full status %d %s %s %d", text.c_str(),
                              fast.e164, fast.region, fast.type, status, full.e164, full.region, full.type);
            }
            ++mismatches;
        }
    }
    return mismatches;
}
