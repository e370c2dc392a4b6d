// SPDX-License-Identifier: MIT
#include "fuzz_support.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ckpt::fuzz {
namespace {

struct Scratch {
    std::string dir;
    Scratch()
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ckpt-fuzz-XXXXXX";
        if (!mkdtemp(pattern.data()))
            throw std::runtime_error("cannot create a scratch directory under " + pattern);
        dir = pattern;
    }
    ~Scratch()
    {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
    }
};

} // namespace

const std::string& scratchDir()
{
    static const Scratch scratch;
    return scratch.dir;
}

std::string writeScratch(const std::string& relative, const uint8_t* data, std::size_t size)
{
    const fs::path path = fs::path(scratchDir()) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out.flush())
        throw std::runtime_error("cannot write " + path.string());
    return path.string();
}

} // namespace ckpt::fuzz
