// A temporary directory removed (with everything below it) when the object goes away.
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <stdlib.h>

namespace guardfs::test {

class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "guardfs-test-XXXXXX");
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        // Canonical, so that tests compare against what canonicalization returns.
        path_ = std::filesystem::canonical(tmpl).string();
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }

    [[nodiscard]] const std::string& path() const { return path_; }

    [[nodiscard]] std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

    // Creates the file (and its parent directories) with the given content.
    std::string write(const std::string& rel, const std::string& content = "") const {
        const std::filesystem::path p = path_ + "/" + rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << content;
        return p.string();
    }

    std::string mkdir(const std::string& rel) const {
        std::filesystem::create_directories(path_ + "/" + rel);
        return path_ + "/" + rel;
    }

private:
    std::string path_;
};

} // namespace guardfs::test
