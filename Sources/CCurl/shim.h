#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call: one typed entry point per kind of argument.
static inline CURLcode ir_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ir_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ir_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ir_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*ir_curl_write_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode ir_curl_set_write_function(CURL *handle, ir_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode ir_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}
