// yaml-cpp, included in one place. yaml-cpp 0.7's node/impl.h trips g++ 12's -Wdangling-pointer
// once inlined at -O2 (a false positive in the library's own code); silence it for that header
// only, and only for GCC (clang, used for the fuzz targets, has no such warning).
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop
#else
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#endif

#include <sstream>
#include <string>

namespace guardfs::patterns {

// The one YAML document of a policy or allow file. yaml-cpp's Load reads the first document
// and ignores the rest (`---` and whatever follows, even a syntax error after `...`), so a
// second document is an error here, thrown as yaml-cpp's own with its place in the text. The
// documents are counted by the parser's events, at most two: LoadAll never ends on some
// malformed input (`!x "a", ""` yields empty documents forever, found by the fuzzer).
inline YAML::Node load_one_document(const std::string& text) {
    YAML::Node root = YAML::Load(text);

    struct Counter final : YAML::EventHandler {
        int documents = 0;
        YAML::Mark second;

        void OnDocumentStart(const YAML::Mark& mark) override {
            if (++documents == 2) {
                second = mark;
            }
        }

        void OnDocumentEnd() override {}

        void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}

        void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}

        void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/,
                      YAML::anchor_t /*anchor*/, const std::string& /*value*/) override {}

        void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/,
                             YAML::anchor_t /*anchor*/,
                             YAML::EmitterStyle::value /*style*/) override {}

        void OnSequenceEnd() override {}

        void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/,
                        YAML::anchor_t /*anchor*/, YAML::EmitterStyle::value /*style*/) override {}

        void OnMapEnd() override {}
    } counter;

    std::istringstream in(text);
    YAML::Parser parser(in);
    while (counter.documents < 2 && parser.HandleNextDocument(counter)) {
    }
    if (counter.documents >= 2) {
        throw YAML::ParserException(counter.second,
                                    "a second YAML document ('---'): the file holds one");
    }
    return root;
}

} // namespace guardfs::patterns
