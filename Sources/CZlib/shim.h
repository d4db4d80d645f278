// zlib (Debian: zlib1g-dev): the gzip files that archive retention exports.
#ifndef HERALD_CZLIB_SHIM_H
#define HERALD_CZLIB_SHIM_H
#include <zlib.h>
#endif
