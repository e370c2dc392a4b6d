// SPDX-License-Identifier: MIT
// Numbers as people read them, one spelling for the CLI and the GUI: sizes in B/KiB/MiB/GiB,
// shapes as "[2, 3]", figures to a given number of significant digits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ckpt {

/// "512 B", "1.50 KiB", "12.3 MiB", "640 GiB": three significant digits from KiB on.
std::string humanBytes(uint64_t bytes);

/// "[2, 3]"; "[]" for a scalar.
std::string formatShape(const std::vector<int64_t>& shape);

/// printf's %.<digits>g: "0.000123457", "1.5e+10", "inf", "nan".
std::string figure(double value, int significantDigits);

} // namespace ckpt
