// SPDX-License-Identifier: MIT
#include "ckpt/report/text_format.h"

#include <cstdio>

namespace ckpt {

std::string humanBytes(uint64_t bytes)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double v = static_cast<double>(bytes);
    int unit = 0;
    while (v >= 1024 && unit < 4) {
        v /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[unit]);
    return buf;
}

std::string formatShape(const std::vector<int64_t>& shape)
{
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

std::string figure(double value, int significantDigits)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", significantDigits, value);
    return buf;
}

} // namespace ckpt
