// The number-type and region decision of libphonenumber's GetNumberType and
// GetRegionCodeForNumber, over the same metadata, with every pattern compiled once per thread.
//
// libphonenumber looks each pattern up in a cache by its text (hashing patterns of up
// to a few KB) and builds a new ICU matcher for every match: about 4 us for a mobile
// number of a region with many patterns. These tables compile each distinct pattern to
// an ICU matcher once per thread, on first use, and reuse it: about 0.6 us. rg_phone_self_check compares the result with
// libphonenumber's own on random numbers of every calling code.
#ifndef RESENDGATE_NUMBER_TYPE_TABLES_HPP
#define RESENDGATE_NUMBER_TYPE_TABLES_HPP

#include <string>

#include <phonenumbers/phonemetadata.pb.h>
#include <phonenumbers/phonenumberutil.h>

namespace resendgate {

/// What the tables decided for one national significant number.
struct NumberTypeDecision {
    /// libphonenumber's region code for the number ("US", "001"), or "ZZ" when no
    /// region of the calling code claims it.
    std::string region;
    i18n::phonenumbers::PhoneNumberUtil::PhoneNumberType type = i18n::phonenumbers::PhoneNumberUtil::UNKNOWN;
};

/// Builds the tables on first use (thread-safe). False when the metadata lacks a region
/// libphonenumber lists: callers then ask libphonenumber itself. A pattern ICU cannot
/// compile is found when first used, and its numbers are then left to libphonenumber.
bool number_type_tables_ready(const i18n::phonenumbers::PhoneMetadataCollection &collection);

/// The region and type of `national` (digits, no leading zero) under `calling_code`,
/// exactly as PhoneNumberUtil::GetRegionCodeForNumber and GetNumberType decide them.
/// Only valid after number_type_tables_ready returned true.
NumberTypeDecision decide_number_type(int calling_code, const std::string &national);

}  // namespace resendgate

#endif
