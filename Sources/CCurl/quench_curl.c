#include "quench_curl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// Filled once, under pthread_once; read only after quench_curl_load returned 0.
static struct {
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(CURLU *, CURLUPart, char **, unsigned int);
    void (*free)(void *);
} curl;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[256];

static void load(void) {
    // The soname of libcurl 7 and 8 alike (Debian's libcurl4 package).
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define FIND(field, name)                                                                  \
    if (!(*(void **)&curl.field = dlsym(library, name))) {                                 \
        snprintf(failure, sizeof failure, "libcurl.so.4 has no %s (older than 7.85?)", name); \
        return;                                                                            \
    }
    FIND(easy_init, "curl_easy_init")
    FIND(easy_cleanup, "curl_easy_cleanup")
    FIND(easy_perform, "curl_easy_perform")
    FIND(easy_strerror, "curl_easy_strerror")
    FIND(easy_setopt, "curl_easy_setopt")
    FIND(easy_getinfo, "curl_easy_getinfo")
    FIND(slist_append, "curl_slist_append")
    FIND(slist_free_all, "curl_slist_free_all")
    FIND(url, "curl_url")
    FIND(url_cleanup, "curl_url_cleanup")
    FIND(url_set, "curl_url_set")
    FIND(url_get, "curl_url_get")
    FIND(free, "curl_free")
#undef FIND
}

int quench_curl_load(char *why, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 0;
    if (why && size) snprintf(why, size, "%s", failure);
    return -1;
}

CURL *quench_curl_easy_init(void) { return curl.easy_init(); }
void quench_curl_easy_cleanup(CURL *c) { curl.easy_cleanup(c); }
CURLcode quench_curl_easy_perform(CURL *c) { return curl.easy_perform(c); }
const char *quench_curl_easy_strerror(CURLcode rc) { return curl.easy_strerror(rc); }
struct curl_slist *quench_curl_slist_append(struct curl_slist *list, const char *text) { return curl.slist_append(list, text); }
void quench_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }
CURLU *quench_curl_url(void) { return curl.url(); }
void quench_curl_url_cleanup(CURLU *u) { curl.url_cleanup(u); }
CURLUcode quench_curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags) { return curl.url_set(u, what, part, flags); }
CURLUcode quench_curl_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags) { return curl.url_get(u, what, part, flags); }
void quench_curl_free(void *p) { curl.free(p); }

CURLcode quench_curl_set_long(CURL *c, CURLoption o, long v) { return curl.easy_setopt(c, o, v); }
CURLcode quench_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl.easy_setopt(c, o, v); }
CURLcode quench_curl_set_list(CURL *c, CURLoption o, struct curl_slist *v) { return curl.easy_setopt(c, o, v); }

static size_t keep(char *data, size_t size, size_t n, void *user) {
    quench_curl_transfer *t = (quench_curl_transfer *)user;
    size_t total = size * n;
    size_t room = sizeof(t->body) - t->count;
    size_t take = total < room ? total : room;
    memcpy(t->body + t->count, data, take);
    t->count += take;
    return total;  // the rest is read and dropped: an answer's size is never ours to trust
}

CURLcode quench_curl_capture(CURL *c, quench_curl_transfer *t) {
    CURLcode rc = curl.easy_setopt(c, CURLOPT_ERRORBUFFER, t->error);
    if (rc != CURLE_OK) return rc;
    rc = curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    if (rc != CURLE_OK) return rc;
    return curl.easy_setopt(c, CURLOPT_WRITEDATA, (void *)t);
}

long quench_curl_response_code(CURL *c) {
    long code = 0;
    curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
