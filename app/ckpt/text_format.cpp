// SPDX-License-Identifier: MIT
#include "text_format.h"

#include <algorithm>
#include <ostream>

namespace {
// Display width of UTF-8 text: count code points, not bytes.
std::size_t displayWidth(const std::string& s)
{
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
} // namespace

void TextTable::print(std::ostream& out) const
{
    std::vector<std::size_t> widths(m_header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
            widths[i] = std::max(widths[i], displayWidth(row[i]));
    };
    measure(m_header);
    for (const auto& r : m_rows)
        measure(r);
    auto printRow = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size())
                line += std::string(widths[i] - displayWidth(row[i]) + 2, ' ');
        }
        out << line << '\n';
    };
    printRow(m_header);
    for (const auto& r : m_rows)
        printRow(r);
}
