// SPDX-License-Identifier: MIT
// libyaml (Debian's libyaml-dev) does the parsing: its event parser keeps its own stacks instead of
// recursing, so a deeply nested file costs memory, not the C stack. This file only builds the JSON
// value from the events and types plain scalars as PyYAML's YAML 1.1 resolver does
// (yaml/resolver.py: bool, int, float, null), with OmegaConf's float resolver, which also reads
// "1e-4" and "1.0e3" as floats (omry/omegaconf@0019bcac omegaconf/_utils.py get_yaml_loader), since
// OmegaConf writes and reads NeMo's configs. Sexagesimal numbers and timestamps stay strings.
#include "ckpt/formats/yaml_json.h"

#include "ckpt/io/errors.h"

#include <yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt {
namespace {

std::string stripUnderscores(const std::string& s)
{
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c != '_')
            out += c;
    }
    return out;
}

bool onlyOf(std::string_view s, std::string_view chars)
{
    return !s.empty() && s.find_first_not_of(chars) == std::string_view::npos;
}

// The number forms below are matched by hand, not with std::regex: libstdc++'s regex executor
// recurses once per character a repetition consumes, and a plain scalar of 100 000 digits (one
// long line in a config inside a checkpoint) overflowed the stack (found by fuzzing). Same
// language as the regexes in the comments (checked against them on every string of up to 5
// characters over digits, '_', '.', 'e', signs, 'x', 'b').

// ^[-+]?(?:0b[01_]+|0[0-7_]+|0x[0-9a-fA-F_]+|0|[1-9][0-9_]*)$
bool integerForm(std::string_view t)
{
    if (!t.empty() && (t[0] == '-' || t[0] == '+'))
        t.remove_prefix(1);
    if (t == "0")
        return true;
    if (t.starts_with("0b"))
        return onlyOf(t.substr(2), "01_");
    if (t.starts_with("0x"))
        return onlyOf(t.substr(2), "0123456789abcdefABCDEF_");
    if (t.starts_with("0"))
        return onlyOf(t.substr(1), "01234567_");
    return !t.empty() && t[0] >= '1' && t[0] <= '9' && (t.size() == 1 || onlyOf(t.substr(1), "0123456789_"));
}

// ^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+|\.[0-9_]+(?:[eE][-+][0-9]+)?)$
bool floatForm(std::string_view t)
{
    const auto skip = [&](std::string_view chars) {
        const std::size_t n = std::min(t.find_first_not_of(chars), t.size());
        t.remove_prefix(n);
        return n;
    };
    const auto exponent = [&](bool optional, bool signRequired) {
        if (t.empty())
            return optional;
        if (t[0] != 'e' && t[0] != 'E')
            return false;
        t.remove_prefix(1);
        if (!t.empty() && (t[0] == '-' || t[0] == '+'))
            t.remove_prefix(1);
        else if (signRequired)
            return false;
        return onlyOf(t, "0123456789");
    };
    if (t.starts_with('.')) {
        t.remove_prefix(1);
        return skip("0123456789_") > 0 && exponent(true, true);
    }
    if (!t.empty() && (t[0] == '-' || t[0] == '+'))
        t.remove_prefix(1);
    if (t.empty() || t[0] < '0' || t[0] > '9')
        return false;
    skip("0123456789_");
    if (t.starts_with('.')) {
        t.remove_prefix(1);
        skip("0123456789_");
        return exponent(true, false);
    }
    return exponent(false, false);
}

// An integer in YAML 1.1's forms: decimal, 0x hexadecimal, a leading 0 for octal, 0b binary.
std::optional<nlohmann::json> yamlInteger(const std::string& text)
{
    if (!integerForm(text))
        return std::nullopt;
    std::string digits = stripUnderscores(text);
    bool negative = false;
    if (digits[0] == '+' || digits[0] == '-') {
        negative = digits[0] == '-';
        digits.erase(0, 1);
    }
    int base = 10;
    if (digits.size() > 1 && digits[0] == '0') {
        if (digits[1] == 'x') {
            base = 16;
            digits.erase(0, 2);
        } else if (digits[1] == 'b') {
            base = 2;
            digits.erase(0, 2);
        } else {
            base = 8;
            digits.erase(0, 1);
        }
    }
    if (digits.empty())
        return std::nullopt;
    errno = 0;
    const unsigned long long magnitude = std::strtoull(digits.c_str(), nullptr, base);
    if (errno == ERANGE) // beyond 64 bits: Python keeps the int exactly; a double keeps its size
        return nlohmann::json(std::strtod(text.c_str(), nullptr));
    if (!negative)
        return nlohmann::json(static_cast<uint64_t>(magnitude));
    if (magnitude > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) + 1ULL)
        return nlohmann::json(-static_cast<double>(magnitude));
    return nlohmann::json(magnitude == 0 ? int64_t{0} : -static_cast<int64_t>(magnitude - 1) - 1);
}

std::optional<nlohmann::json> yamlFloat(const std::string& text)
{
    static const std::regex inf(R"(^[-+]?\.(?:inf|Inf|INF)$)");
    static const std::regex nan(R"(^\.(?:nan|NaN|NAN)$)");
    if (std::regex_match(text, inf))
        return nlohmann::json(text[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
    if (std::regex_match(text, nan))
        return nlohmann::json(std::numeric_limits<double>::quiet_NaN());
    if (!floatForm(text))
        return std::nullopt;
    return nlohmann::json(std::strtod(stripUnderscores(text).c_str(), nullptr));
}

nlohmann::json plainScalar(const std::string& text)
{
    static const std::map<std::string, bool> booleans = {
        {"yes", true}, {"Yes", true}, {"YES", true}, {"true", true}, {"True", true}, {"TRUE", true},
        {"on", true}, {"On", true}, {"ON", true}, {"no", false}, {"No", false}, {"NO", false},
        {"false", false}, {"False", false}, {"FALSE", false}, {"off", false}, {"Off", false}, {"OFF", false}};
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
        return nullptr;
    if (const auto b = booleans.find(text); b != booleans.end())
        return b->second;
    if (auto i = yamlInteger(text))
        return *i;
    if (auto f = yamlFloat(text))
        return *f;
    return text;
}

std::size_t nodeCount(const nlohmann::json& j)
{
    std::size_t n = 1;
    if (j.is_structured()) {
        for (const auto& v : j)
            n += nodeCount(v);
    }
    return n;
}

struct Frame {
    nlohmann::json value;
    std::string anchor;
    std::optional<std::string> pendingKey; // a mapping waiting for the value of this key
};

class Builder {
public:
    explicit Builder(const YamlLimits& limits) : m_limits(limits) {}

    bool done() const { return m_done; }
    nlohmann::json take() { return std::move(m_result); }

    void open(nlohmann::json empty, const char* anchor)
    {
        if (m_stack.size() >= m_limits.maxDepth)
            throw LimitError("the YAML nests deeper than " + std::to_string(m_limits.maxDepth) + " levels (limit exceeded)");
        count(1);
        m_stack.push_back({std::move(empty), anchor ? anchor : "", std::nullopt});
    }

    void close()
    {
        Frame f = std::move(m_stack.back());
        m_stack.pop_back();
        if (!f.anchor.empty())
            m_anchors[f.anchor] = f.value;
        add(std::move(f.value));
    }

    void scalar(const yaml_event_t& e)
    {
        const std::string text(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        const bool plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && e.data.scalar.plain_implicit;
        nlohmann::json v = plain ? plainScalar(text) : nlohmann::json(text);
        count(1);
        if (e.data.scalar.anchor)
            m_anchors[reinterpret_cast<const char*>(e.data.scalar.anchor)] = v;
        add(std::move(v));
    }

    void alias(const yaml_event_t& e)
    {
        const std::string name(reinterpret_cast<const char*>(e.data.alias.anchor));
        const auto it = m_anchors.find(name);
        if (it == m_anchors.end())
            throw FormatError("the YAML refers to an undefined anchor *" + name);
        count(nodeCount(it->second));
        add(it->second);
    }

private:
    void count(std::size_t n)
    {
        m_nodes += n;
        if (m_nodes > m_limits.maxNodes)
            throw LimitError("the YAML expands to more than " + std::to_string(m_limits.maxNodes) + " values (limit exceeded)");
    }

    void add(nlohmann::json v)
    {
        if (m_stack.empty()) {
            m_result = std::move(v);
            m_done = true;
            return;
        }
        Frame& top = m_stack.back();
        if (top.value.is_array()) {
            top.value.push_back(std::move(v));
        } else if (!top.pendingKey) {
            // A mapping or sequence as a key: PyYAML (and OmegaConf) refuse it ("found unhashable
            // key"). Dumped into a key, nested ones grew exponentially, every level escaping the
            // quotes of the one inside (a 448-byte fuzz input asked for 22 GB).
            if (v.is_object() || v.is_array())
                throw FormatError("YAML: a mapping or sequence is used as a mapping key, which YAML loaders refuse "
                                  "(PyYAML: found unhashable key)");
            top.pendingKey = v.is_string() ? v.get<std::string>() : v.dump();
        } else {
            top.value[*top.pendingKey] = std::move(v);
            top.pendingKey.reset();
        }
    }

    const YamlLimits& m_limits;
    std::vector<Frame> m_stack;
    std::map<std::string, nlohmann::json> m_anchors;
    nlohmann::json m_result;
    std::size_t m_nodes = 0;
    bool m_done = false;
};

} // namespace

nlohmann::json parseYaml(std::string_view text, const YamlLimits& limits)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        throw FormatError("cannot start the YAML parser (out of memory)");
    std::unique_ptr<yaml_parser_t, decltype(&yaml_parser_delete)> guard(&parser, &yaml_parser_delete);
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    Builder builder(limits);
    while (!builder.done()) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            throw FormatError("not valid YAML: " + std::string(parser.problem ? parser.problem : "parse error") + " at line "
                              + std::to_string(parser.problem_mark.line + 1));
        }
        std::unique_ptr<yaml_event_t, decltype(&yaml_event_delete)> eventGuard(&event, &yaml_event_delete);
        switch (event.type) {
        case YAML_STREAM_END_EVENT:
            return nullptr; // an empty file
        case YAML_MAPPING_START_EVENT:
            builder.open(nlohmann::json::object(), reinterpret_cast<const char*>(event.data.mapping_start.anchor));
            break;
        case YAML_SEQUENCE_START_EVENT:
            builder.open(nlohmann::json::array(), reinterpret_cast<const char*>(event.data.sequence_start.anchor));
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            builder.close();
            break;
        case YAML_SCALAR_EVENT:
            builder.scalar(event);
            break;
        case YAML_ALIAS_EVENT:
            builder.alias(event);
            break;
        default: // stream and document starts, document ends: no value
            break;
        }
    }
    return builder.take();
}

} // namespace ckpt
