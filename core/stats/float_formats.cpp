// SPDX-License-Identifier: MIT
#include "float_formats.h"

#include <array>
#include <cmath>
#include <limits>

namespace ckpt::kernels {

float f8ToFloat(Kind kind, uint8_t b)
{
    const float sign = (b & 0x80) ? -1.0f : 1.0f;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    switch (kind) {
    case Kind::F8E5M2: // the upper byte of a binary16
        return halfToFloat(static_cast<uint16_t>(b << 8));
    case Kind::F8E4M3FN: { // bias 7, no infinities, S.1111.111 is NaN
        const int e = (b >> 3) & 0xf, m = b & 7;
        if (e == 15 && m == 7)
            return nan;
        return sign * (e == 0 ? std::ldexp(m / 8.0f, -6) : std::ldexp(1 + m / 8.0f, e - 7));
    }
    case Kind::F8E5M2FNUZ: { // bias 16, no infinities, no -0: 0x80 is the only NaN
        if (b == 0x80)
            return nan;
        const int e = (b >> 2) & 0x1f, m = b & 3;
        return sign * (e == 0 ? std::ldexp(m / 4.0f, -15) : std::ldexp(1 + m / 4.0f, e - 16));
    }
    case Kind::F8E4M3FNUZ: { // bias 8, 0x80 is the only NaN
        if (b == 0x80)
            return nan;
        const int e = (b >> 3) & 0xf, m = b & 7;
        return sign * (e == 0 ? std::ldexp(m / 8.0f, -7) : std::ldexp(1 + m / 8.0f, e - 8));
    }
    case Kind::F8E8M0: // a bare exponent, bias 127; 0xff is NaN
        return b == 0xff ? nan : std::ldexp(1.0f, b - 127);
    default:
        return 0;
    }
}

const float* f8Table(Kind kind)
{
    static const auto tables = [] {
        std::array<std::array<float, 256>, 5> t{};
        const Kind kinds[] = {Kind::F8E5M2, Kind::F8E4M3FN, Kind::F8E5M2FNUZ, Kind::F8E4M3FNUZ, Kind::F8E8M0};
        for (std::size_t k = 0; k < 5; ++k) {
            for (int b = 0; b < 256; ++b)
                t[k][static_cast<std::size_t>(b)] = f8ToFloat(kinds[k], static_cast<uint8_t>(b));
        }
        return t;
    }();
    return tables[static_cast<std::size_t>(kind) - static_cast<std::size_t>(Kind::F8E5M2)].data();
}

} // namespace ckpt::kernels
