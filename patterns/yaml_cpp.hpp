// yaml-cpp, included in one place. yaml-cpp 0.7's node/impl.h trips g++ 12's -Wdangling-pointer
// once inlined at -O2 (a false positive in the library's own code); silence it for that header
// only, and only for GCC (clang, used for the fuzz targets, has no such warning).
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop
#else
#include <yaml-cpp/yaml.h>
#endif
