#ifndef RESENDGATE_CCRYPTO_SHIM_H
#define RESENDGATE_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian libssl-dev), for HMAC-SHA256 of phone numbers.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
