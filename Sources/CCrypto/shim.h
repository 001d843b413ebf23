// OpenSSL's libcrypto (libcurl is built on it already): SHA-256 for the
// payload hash of AWS Signature V4; HMAC-SHA-256 for the live notification
// channels' names.
#include <openssl/evp.h>
#include <openssl/hmac.h>
