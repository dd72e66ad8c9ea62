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

#include <string>
#include <vector>

namespace guardfs::patterns {

// The one YAML document of a policy or allow file. yaml-cpp's Load reads the first document
// and ignores the rest (`---` and whatever follows, even a syntax error after `...`), so a
// second document is an error here, thrown as yaml-cpp's own with its place in the text.
inline YAML::Node load_one_document(const std::string& text) {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) {
        throw YAML::ParserException(docs[1].Mark(),
                                    "a second YAML document ('---'): the file holds one");
    }
    return docs.empty() ? YAML::Node() : docs.front();
}

} // namespace guardfs::patterns
