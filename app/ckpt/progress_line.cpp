// SPDX-License-Identifier: MIT
#include "progress_line.h"

#include <cstdio>
#include <unistd.h>

ProgressLine::ProgressLine(std::string what) : m_what(std::move(what)), m_enabled(::isatty(2) == 1) {}

std::function<bool(const ckpt::CheckProgress&)> ProgressLine::checkCallback()
{
    if (!m_enabled)
        return {};
    return [this](const ckpt::CheckProgress& p) {
        const std::string line = "\r" + m_what + ": " + (p.total ? std::to_string(p.done + 1) + " of " + std::to_string(p.total) + ": " : "")
                               + p.stage;
        std::fputs((line.substr(0, 160) + "\033[K").c_str(), stderr);
        std::fflush(stderr);
        m_shown = true;
        return true;
    };
}

std::function<bool(const ckpt::StatsProgress&)> ProgressLine::callback()
{
    if (!m_enabled)
        return {};
    return [this](const ckpt::StatsProgress& p) {
        const auto now = std::chrono::steady_clock::now();
        if (now - m_last < std::chrono::milliseconds(200) || p.bytesTotal == 0)
            return true;
        m_last = now;
        std::fprintf(stderr, "\r%s: %3d%%", m_what.c_str(), static_cast<int>(100.0 * static_cast<double>(p.bytesDone) / static_cast<double>(p.bytesTotal)));
        m_shown = true;
        return true;
    };
}

void ProgressLine::clear()
{
    if (m_shown)
        std::fputs("\r\033[K", stderr); // back to the line's start, erased to its end
    m_shown = false;
}
