// SPDX-License-Identifier: MIT
// A main for the fuzz entry points in builds without libFuzzer (g++, CI): runs each file given,
// or every file in each folder given, through LLVMFuzzerTestOneInput once. The regression files
// of past findings are replayed this way by CTest in every build. A file named *.gz is replayed
// decompressed: findings that need a large input (deep nesting) stay small in the repository.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/resource.h>
#include <vector>
#include <zlib.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

// The fuzz runs use -rss_limit_mb=1536; replaying, an input that made the reader allocate (and
// touch) anywhere near that much from a few KiB is the unbounded-allocation finding come back.
constexpr long kMaxResidentKiB = 1024 * 1024;

long peakResidentKiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

std::vector<char> readInput(const fs::path& file)
{
    if (file.extension() == ".gz") {
        std::vector<char> bytes;
        gzFile in = gzopen(file.c_str(), "rb");
        if (!in)
            return bytes;
        char chunk[1 << 16];
        for (int n; (n = gzread(in, chunk, sizeof chunk)) > 0;)
            bytes.insert(bytes.end(), chunk, chunk + n);
        gzclose(in);
        return bytes;
    }
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg = argv[i];
        if (fs::is_directory(arg)) {
            for (const auto& entry : fs::recursive_directory_iterator(arg)) {
                if (entry.is_regular_file())
                    files.push_back(entry.path());
            }
        } else if (fs::exists(arg)) {
            files.push_back(arg);
        } else {
            std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 2;
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "replay: no inputs given\n");
        return 2;
    }
    for (const fs::path& file : files) {
        const std::vector<char> bytes = readInput(file);
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        if (peakResidentKiB() > kMaxResidentKiB) {
            std::fprintf(stderr, "replay: %s made the process resident set reach %ld MiB\n", file.c_str(),
                         peakResidentKiB() / 1024);
            return 1;
        }
    }
    std::printf("replay: %zu inputs ran cleanly\n", files.size());
    return 0;
}
