// zlib (Debian zlib1g-dev): the web page's gzip. deflateInit2 is a macro Swift cannot call:
// one inline wrapper for the gzip stream the server writes.
#include <zlib.h>

/// A deflate stream that writes gzip (RFC 1952: window bits 15 + 16), level `level`.
static inline int quench_deflate_gzip_init(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
