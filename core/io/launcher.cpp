// SPDX-License-Identifier: MIT
#include "ckpt/io/launcher.h"

namespace ckpt {

std::vector<std::string> splitCommandLine(std::string_view text)
{
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (inWord)
                words.push_back(std::move(word));
            word.clear();
            inWord = false;
            continue;
        }
        inWord = true;
        if (c == '\\') {
            if (++i == text.size())
                throw LauncherError("the launcher ends with a backslash: nothing follows it to escape");
            if (text[i] != '\n') // backslash-newline joins lines
                word += text[i];
        } else if (c == '\'') {
            const std::size_t end = text.find('\'', i + 1);
            if (end == std::string_view::npos)
                throw LauncherError("the launcher has an unterminated single quote");
            word.append(text.substr(i + 1, end - i - 1));
            i = end;
        } else if (c == '"') {
            for (++i;; ++i) {
                if (i >= text.size())
                    throw LauncherError("the launcher has an unterminated double quote");
                if (text[i] == '"')
                    break;
                if (text[i] == '\\' && i + 1 < text.size()
                    && (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$' || text[i + 1] == '`'))
                    ++i;
                word += text[i];
            }
        } else {
            word += c;
        }
    }
    if (inWord)
        words.push_back(std::move(word));
    return words;
}

std::vector<std::string> launchCommand(std::string_view prefix, const std::string& program,
                                       const std::vector<std::string>& arguments)
{
    std::vector<std::string> argv = splitCommandLine(prefix);
    argv.push_back(program);
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    return argv;
}

std::string quoteCommandLine(const std::vector<std::string>& argv)
{
    std::string out;
    for (const std::string& a : argv) {
        if (!out.empty())
            out += ' ';
        const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_./=:,+@%") == std::string::npos;
        if (plain) {
            out += a;
            continue;
        }
        out += '\'';
        for (char c : a) {
            if (c == '\'')
                out += "'\\''";
            else
                out += c;
        }
        out += '\'';
    }
    return out;
}

} // namespace ckpt
