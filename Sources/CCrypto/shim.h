// OpenSSL's libcrypto (libcurl is built on it already): SHA-256 for the
// payload hash of AWS Signature V4.
#include <openssl/evp.h>
