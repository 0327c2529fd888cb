// libcurl (Debian libcurl4-openssl-dev): HTTPS with the system's OpenSSL and CA store.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call:
// one typed wrapper per argument type, and the write callback, are here.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <string.h>

/// What one transfer leaves behind: curl's error text and the first bytes of the answer.
typedef struct {
    char error[CURL_ERROR_SIZE];
    char body[512];
    size_t count;
} quench_curl_transfer;

static size_t quench_curl_keep(char *data, size_t size, size_t n, void *user) {
    quench_curl_transfer *t = (quench_curl_transfer *)user;
    size_t total = size * n;
    size_t room = sizeof(t->body) - t->count;
    size_t take = total < room ? total : room;
    memcpy(t->body + t->count, data, take);
    t->count += take;
    return total;  // the rest is read and dropped: an answer's size is never ours to trust
}

static inline CURLcode quench_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode quench_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode quench_curl_set_list(CURL *c, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(c, o, v); }

/// Keeps the error text and the first 512 bytes of the answer in `t`.
static inline CURLcode quench_curl_capture(CURL *c, quench_curl_transfer *t) {
    CURLcode rc = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, t->error);
    if (rc != CURLE_OK) return rc;
    rc = curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, quench_curl_keep);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(c, CURLOPT_WRITEDATA, (void *)t);
}

static inline long quench_curl_response_code(CURL *c) {
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
