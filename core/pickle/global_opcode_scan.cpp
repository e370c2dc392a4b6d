// SPDX-License-Identifier: MIT
// The lexer's pass over a pickle's opcodes for the globals it names, without running it: what the
// imports report lists for a pickle the machine refused part-way (whatever follows the refusal is
// still worth naming), and for streams no machine run reaches. STACK_GLOBAL's operands are the
// last strings pushed or fetched from the memo; anything it cannot follow is the global "?".
#include "ckpt/pickle/imports_report.h"

#include "ckpt/pickle/pickle_machine.h"
#include "pickle_machine_impl.h"

#include <charconv>
#include <string>
#include <unordered_map>
#include <vector>

namespace ckpt {

std::vector<PickleGlobal> scanGlobalOpcodes(Bytes data, std::size_t start, std::size_t* stopOffset)
{
    std::vector<PickleGlobal> out;
    std::unordered_map<uint64_t, std::string> memoStrings;
    std::vector<std::string> recent; // strings pushed lately, for STACK_GLOBAL
    std::string lastPushed;
    bool lastWasString = false;
    ByteReader in(data, start);
    auto pushString = [&](std::string s) {
        lastPushed = s;
        lastWasString = true;
        recent.push_back(std::move(s));
        if (recent.size() > 8)
            recent.erase(recent.begin());
    };
    auto memoPut = [&](uint64_t key) {
        if (lastWasString && memoStrings.size() < 100000)
            memoStrings[key] = lastPushed;
    };
    auto memoGet = [&](uint64_t key) {
        const auto it = memoStrings.find(key);
        if (it != memoStrings.end())
            pushString(it->second);
        else
            recent.push_back(std::string("\x01?"));
    };
    auto index = [](std::string_view s) {
        uint64_t v = 0;
        std::from_chars(s.data(), s.data() + s.size(), v);
        return v;
    };
    try {
        while (!in.atEnd()) {
            const std::size_t at = in.pos();
            const uint8_t op = in.u8();
            const bool wasString = lastWasString;
            lastWasString = false;
            switch (op) {
            case '.': if (stopOffset) *stopOffset = in.pos(); return out;
            case 'c':
            case 'i': {
                const std::string m(in.line());
                const std::string n(in.line());
                // Every CPython loader decodes both lines as UTF-8 and imports a non-empty module:
                // a global that fails either is refused there and imports nothing.
                if (m.empty() || n.empty() || !detail::isUtf8(m, false) || !detail::isUtf8(n, false))
                    break;
                PickleGlobal g;
                auto [mm, nn] = mapPython2Name(m, n);
                g.module = mm;
                g.name = nn;
                g.offset = at;
                out.push_back(std::move(g));
                break;
            }
            case 0x93: {
                PickleGlobal g;
                g.offset = at;
                if (recent.size() >= 2 && recent[recent.size() - 1] != "\x01?" && recent[recent.size() - 2] != "\x01?") {
                    const std::string& m = recent[recent.size() - 2];
                    const std::string& n = recent[recent.size() - 1];
                    // As for GLOBAL: an empty or non-UTF-8 name imports nothing (no module or
                    // function worth hiding has a name outside ASCII).
                    if (m.empty() || n.empty() || !detail::isUtf8(m, false) || !detail::isUtf8(n, false))
                        break;
                    auto [mm, nn] = mapPython2Name(m, n);
                    g.module = mm;
                    g.name = nn;
                } else {
                    g.module = g.name = "?";
                    g.literal = false;
                }
                out.push_back(std::move(g));
                break;
            }
            case 'X': pushString(std::string(asText(in.take(in.u32())))); break;
            case 0x8C: pushString(std::string(asText(in.take(in.u8())))); break;
            case 0x8D: pushString(std::string(asText(in.take(in.u64())))); break;
            case 'U': pushString(std::string(asText(in.take(in.u8())))); break;
            case 'T': pushString(std::string(asText(in.take(static_cast<uint32_t>(in.i32()))))); break;
            case 'V': case 'S': pushString(std::string(in.line())); break;
            case 'q': lastWasString = wasString; memoPut(in.u8()); break;
            case 'r': lastWasString = wasString; memoPut(in.u32()); break;
            case 'p': lastWasString = wasString; memoPut(index(in.line())); break;
            case 0x94: lastWasString = wasString; memoPut(memoStrings.size() + 1000000000ull); break;
            case 'h': memoGet(in.u8()); break;
            case 'j': memoGet(in.u32()); break;
            case 'g': memoGet(index(in.line())); break;
            case 'B': in.skip(in.u32()); break;
            case 'C': in.skip(in.u8()); break;
            case 0x8E: case 0x96: in.skip(in.u64()); break;
            case 0x95: in.u64(); break;
            case 0x80: case 'K': case 0x82: in.u8(); break;
            case 'M': case 0x83: in.u16(); break;
            case 'J': case 0x84: in.u32(); break;
            case 0x8A: in.skip(in.u8()); break;
            case 0x8B: in.skip(static_cast<uint32_t>(in.i32())); break;
            case 'G': in.skip(8); break;
            case 'I': case 'L': case 'F': case 'P': in.line(); break;
            case '(': case ')': case '0': case '1': case '2': case 'N': case 0x88: case 0x89: case 't': case 0x85:
            case 0x86: case 0x87: case ']': case 'l': case 'a': case 'e': case '}': case 'd': case 's': case 'u':
            case 0x8F: case 0x90: case 0x91: case 'R': case 0x81: case 0x92: case 'b': case 'Q': case 'o': case 0x97:
            case 0x98:
                break;
            default:
                if (stopOffset) *stopOffset = at;
                return out;
            }
        }
    } catch (const FormatError&) {
        // truncated operand: report what was found up to here
    }
    if (stopOffset)
        *stopOffset = in.pos();
    return out;
}

} // namespace ckpt
