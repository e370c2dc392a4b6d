// SPDX-License-Identifier: MIT
// Human-readable output: left-aligned columns, and the shared spellings of sizes, shapes and
// figures (core/report).
#pragma once

#include "ckpt/report/text_format.h"

#include <iosfwd>
#include <string>
#include <vector>

using ckpt::formatShape;
using ckpt::humanBytes;

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
