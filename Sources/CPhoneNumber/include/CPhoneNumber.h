#ifndef RESENDGATE_CPHONENUMBER_H
#define RESENDGATE_CPHONENUMBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Why a parse failed. Stable values: the Swift layer maps them to typed errors.
typedef enum rg_phone_status {
    RG_PHONE_OK = 0,
    RG_PHONE_EMPTY = 1,
    RG_PHONE_NOT_A_NUMBER = 2,
    RG_PHONE_TOO_SHORT = 3,
    RG_PHONE_TOO_LONG = 4,
    RG_PHONE_INVALID_FOR_REGION = 5,
    RG_PHONE_INVALID_COUNTRY_CODE = 6,
    RG_PHONE_MISSING_REGION = 7,
    RG_PHONE_INTERNAL = 8
} rg_phone_status;

/// libphonenumber's number types, in a stable C form.
typedef enum rg_phone_type {
    RG_PHONE_TYPE_FIXED_LINE = 0,
    RG_PHONE_TYPE_MOBILE = 1,
    RG_PHONE_TYPE_FIXED_LINE_OR_MOBILE = 2,
    RG_PHONE_TYPE_TOLL_FREE = 3,
    RG_PHONE_TYPE_PREMIUM_RATE = 4,
    RG_PHONE_TYPE_SHARED_COST = 5,
    RG_PHONE_TYPE_VOIP = 6,
    RG_PHONE_TYPE_PERSONAL_NUMBER = 7,
    RG_PHONE_TYPE_PAGER = 8,
    RG_PHONE_TYPE_UAN = 9,
    RG_PHONE_TYPE_VOICEMAIL = 10,
    RG_PHONE_TYPE_UNKNOWN = 11
} rg_phone_type;

/// The result of a successful parse, in fixed-size buffers (no allocation to free).
typedef struct rg_phone_result {
    char e164[24];     /* "+8613800138000", NUL-terminated */
    char region[4];    /* "CN", or "001" for non-geographic entities */
    int type;          /* an rg_phone_type */
    int country_code;  /* 86 */
} rg_phone_result;

/// Parses `len` bytes of UTF-8 as a phone number. `default_region` (two letters,
/// or NULL) is used when the input has no country code.
rg_phone_status rg_phone_parse(const char *input, size_t len,
                               const char *default_region,
                               rg_phone_result *out);

/// Only the E.164 fast path of rg_phone_parse: 1 when it decided (`out` filled, exactly
/// as rg_phone_parse would), 0 when the input needs the full parse. About 1 us, where
/// the full parse costs 20-40: callers may skip their own cache for input it decides.
int rg_phone_parse_e164(const char *input, size_t len, rg_phone_result *out);

/// libphonenumber's parse alone (no fast path), to the same fixed point as rg_phone_parse:
/// what rg_phone_parse must always agree with. For tests and the fuzzer.
rg_phone_status rg_phone_parse_full(const char *input, size_t len,
                                    const char *default_region,
                                    rg_phone_result *out);

/// Spells an example number of every calling code in many ways (leading zeros before the
/// code, IDD prefixes, trunk prefixes, a digit more or fewer, separators, full-width and
/// Arabic-Indic digits, national format in its region) and checks that rg_phone_parse
/// agrees with rg_phone_parse_full on each (status and result), and that every spelling
/// of the same number gives that number's key. Returns the disagreements; `compared`
/// counts the inputs; the first disagreement is written to `first_mismatch`. For tests.
long rg_phone_differential_check(unsigned seed, long *compared, char *first_mismatch, size_t capacity);

/// Compares the E.164 fast path with libphonenumber's full parse (rg_phone_parse_full, the
/// fixed-point rule included: what rg_phone_parse would answer) on `samples` numbers
/// (example numbers with changed digits, and random digits, over every calling code)
/// and returns how many it decided differently; `decided` counts the numbers the fast
/// path decided, and the first difference is written to `first_mismatch`. For tests.
long rg_phone_self_check(long samples, unsigned seed, long *decided, char *first_mismatch, size_t capacity);

/// 1 when libphonenumber knows `region` (two letters, upper case), else 0.
int rg_phone_is_known_region(const char *region);

#ifdef __cplusplus
}
#endif

#endif
