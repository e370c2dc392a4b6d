// SPDX-License-Identifier: MIT
// nlohmann/json has no switch for the non-standard tokens, and no number text that parses to NaN
// or ±Inf (1e999 is an overflow error). So each token outside a string is replaced by a number
// literal no writer produces (an odd subnormal) and turned back into its value by the parser
// callback, the one public hook that may rewrite a parsed value.
#include "ckpt/formats/python_json.h"

#include <array>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <string>

namespace ckpt {
namespace {

struct Token {
    std::string_view python;  // as json.dumps writes it
    const char* stand_in;     // a number text of the same meaning to us only
    double value;
};

const std::array<Token, 3>& tokens()
{
    static const std::array<Token, 3> t = {{
        {"-Infinity", "-4.4465908125712189e-323", -std::numeric_limits<double>::infinity()},
        {"Infinity", "4.4465908125712189e-323", std::numeric_limits<double>::infinity()},
        {"NaN", "4.9406564584124654e-323", std::numeric_limits<double>::quiet_NaN()},
    }};
    return t;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

} // namespace

nlohmann::json parsePythonJson(std::string_view text)
{
    std::string rewritten;
    rewritten.reserve(text.size());
    bool inString = false, escaped = false, any = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            inString = escaped || c != '"';
            escaped = !escaped && c == '\\';
            rewritten += c;
            continue;
        }
        if (c == '"') {
            inString = true;
            rewritten += c;
            continue;
        }
        bool replaced = false;
        for (const Token& t : tokens()) {
            if (text.substr(i, t.python.size()) == t.python) {
                rewritten += t.stand_in;
                i += t.python.size() - 1;
                replaced = any = true;
                break;
            }
        }
        if (!replaced)
            rewritten += c;
    }
    if (!any)
        return nlohmann::json::parse(text);
    static const std::array<double, 3> standIns = {std::strtod(tokens()[0].stand_in, nullptr),
                                                   std::strtod(tokens()[1].stand_in, nullptr),
                                                   std::strtod(tokens()[2].stand_in, nullptr)};
    return nlohmann::json::parse(rewritten, [](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::value && parsed.is_number_float()) {
            for (std::size_t k = 0; k < standIns.size(); ++k) {
                if (sameBits(parsed.get<double>(), standIns[k]))
                    parsed = tokens()[k].value;
            }
        }
        return true;
    });
}

} // namespace ckpt
