// A plain C interface over libphonenumber, so that no C++ type crosses into Swift.
#include "CPhoneNumber.h"

#include <cstring>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

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

extern "C" rg_phone_status rg_phone_parse(const char *input, size_t len,
                                          const char *default_region,
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

extern "C" int rg_phone_is_known_region(const char *region) {
    if (region == nullptr) return 0;
    std::set<std::string> regions;
    PhoneNumberUtil::GetInstance()->GetSupportedRegions(&regions);
    return regions.count(region) ? 1 : 0;
}
