// libcurl (Debian libcurl4), loaded with dlopen the first time a push is sent or its URL checked:
// linked at start, it and its 30 libraries (TLS, Kerberos, LDAP, SSH...) cost every `quench`
// command 5.5 MB and their relocations, for what only the reminder timer and `config check` use.
// The headers (libcurl4-openssl-dev) give the types and constants; nothing here names a curl
// symbol the linker would need. curl_easy_setopt and curl_easy_getinfo are variadic, which
// Swift cannot call: one typed wrapper per argument type, and the write callback, are here.
#ifndef QUENCH_CURL_H
#define QUENCH_CURL_H
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <stddef.h>

/// What one transfer leaves behind: curl's error text and the first bytes of the answer.
typedef struct {
    char error[CURL_ERROR_SIZE];
    char body[512];
    size_t count;
} quench_curl_transfer;

/// Loads libcurl once (every call after the first returns the first one's answer): 0 when it is
/// there; else -1, with why (dlopen's or dlsym's words) in `why`.
int quench_curl_load(char *why, size_t size);

// The calls, through the loaded library (quench_curl_load must have returned 0).
CURL *quench_curl_easy_init(void);
void quench_curl_easy_cleanup(CURL *c);
CURLcode quench_curl_easy_perform(CURL *c);
const char *quench_curl_easy_strerror(CURLcode rc);
struct curl_slist *quench_curl_slist_append(struct curl_slist *list, const char *text);
void quench_curl_slist_free_all(struct curl_slist *list);
CURLU *quench_curl_url(void);
void quench_curl_url_cleanup(CURLU *u);
CURLUcode quench_curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags);
CURLUcode quench_curl_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags);
void quench_curl_free(void *p);

CURLcode quench_curl_set_long(CURL *c, CURLoption o, long v);
CURLcode quench_curl_set_string(CURL *c, CURLoption o, const char *v);
CURLcode quench_curl_set_list(CURL *c, CURLoption o, struct curl_slist *v);
/// Keeps the error text and the first 512 bytes of the answer in `t`.
CURLcode quench_curl_capture(CURL *c, quench_curl_transfer *t);
long quench_curl_response_code(CURL *c);

#endif
