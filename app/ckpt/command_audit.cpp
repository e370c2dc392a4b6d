// SPDX-License-Identifier: MIT
// ckpt audit PATH [--json]: sizes and SHA-256 of every file against the manifests, COMPLETE
// markers, RNG files per rank, the `latest` pointer and sharded safetensors indexes.
#include "commands.h"
#include "text_format.h"

#include "ckpt/audit/manifest_audit.h"
#include "ckpt/report/json_export.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace {

/// One updating line on stderr, at most ten times a second; cleared when done.
class ProgressLine {
public:
    bool update(const ckpt::AuditProgress& p)
    {
        const auto now = std::chrono::steady_clock::now();
        const bool last = p.filesDone == p.filesTotal;
        if (!last && m_shown && now - m_lastDraw < std::chrono::milliseconds(100))
            return true;
        m_lastDraw = now;
        m_shown = true;
        const int percent = p.bytesTotal ? static_cast<int>(100.0 * static_cast<double>(p.bytesDone) / static_cast<double>(p.bytesTotal)) : 100;
        std::string line = "\rckpt audit: " + humanBytes(p.bytesDone) + " of " + humanBytes(p.bytesTotal) + " (" +
            std::to_string(percent > 100 ? 100 : percent) + "%), " + std::to_string(p.filesDone) + " of " +
            std::to_string(p.filesTotal) + " files hashed\033[K";
        std::fputs(line.c_str(), stderr);
        std::fflush(stderr);
        return true;
    }
    void clear()
    {
        if (m_shown) {
            std::fputs("\r\033[K", stderr);
            std::fflush(stderr);
        }
        m_shown = false;
    }
    ~ProgressLine() { clear(); }

private:
    std::chrono::steady_clock::time_point m_lastDraw{};
    bool m_shown = false;
};

std::string plural(std::size_t n, const char* word)
{
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void printHuman(const std::string& path, const ckpt::AuditResult& r)
{
    std::cout << "audit of " << path << ": " << plural(r.checkpoints, "checkpoint") << ", "
              << plural(r.filesChecked, "file") << " checked, " << humanBytes(r.bytesHashed) << " hashed\n";
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& f : r.findings) {
        ++counts[static_cast<int>(f.severity)];
        std::string sev = ckpt::severityName(f.severity);
        sev.resize(8, ' ');
        std::cout << "\n" << sev << f.rule << " [" << ckpt::componentName(f.component) << "]\n";
        std::cout << "        " << f.message << "\n";
        if (!f.file.empty())
            std::cout << "        file: " << f.file << "\n";
        for (const auto& e : f.evidence)
            std::cout << "        " << e.what << ": " << e.value << "  (" << e.where << ")\n";
        if (!f.assumes.empty())
            std::cout << "        assumes: " << f.assumes << "\n";
        if (!f.hint.empty())
            std::cout << "        hint: " << f.hint << "\n";
    }
    if (r.findings.empty()) {
        std::cout << "OK: every file matches its manifest; no findings\n";
        return;
    }
    std::cout << "\n" << plural(counts[2], "error") << ", " << plural(counts[1], "warning") << ", " << counts[0]
              << " info\n";
}

} // namespace

int runAudit(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt audit PATH [--json]");
    const std::string& path = args.positional[0];
    ckpt::AuditOptions options;
    ProgressLine progress;
    if (::isatty(STDERR_FILENO))
        options.progress = [&progress](const ckpt::AuditProgress& p) { return progress.update(p); };
    ckpt::AuditResult result;
    try {
        result = ckpt::auditPath(path, options);
    } catch (const std::exception& e) {
        progress.clear();
        return failWith(e.what()); // OpenError: "PATH: reason"
    }
    progress.clear();

    if (args.has("--json"))
        std::cout << ckpt::dumpJson(ckpt::auditResultToJson(path, result)) << '\n';
    else
        printHuman(path, result);
    for (const auto& f : result.findings) {
        if (f.severity != ckpt::Severity::Info)
            return kExitFindings;
    }
    return kExitOk;
}
