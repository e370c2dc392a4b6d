// SPDX-License-Identifier: MIT
// Human-readable output: sizes in KiB/MiB/GiB and left-aligned columns.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

std::string humanBytes(uint64_t bytes);

/// "[2, 3]"
std::string formatShape(const std::vector<int64_t>& shape);

/// Prints rows as columns separated by two spaces; the last column is not padded.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> header) : m_header(std::move(header)) {}
    void addRow(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
    void print(std::ostream& out) const;

private:
    std::vector<std::string> m_header;
    std::vector<std::vector<std::string>> m_rows;
};
