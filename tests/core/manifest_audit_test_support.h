// SPDX-License-Identifier: MIT
// Helpers the two manifest audit tests share (tst_manifest_audit.cpp, tst_manifest_audit_layouts.cpp):
// findings as rule lists and as readable text, and writing a small file.
#pragma once

#include "ckpt/audit/manifest_audit.h"
#include "test_support.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <fstream>
#include <string>

namespace testsupport {

inline QStringList rules(const ckpt::AuditResult& r)
{
    QStringList out;
    for (const auto& f : r.findings)
        out << QString::fromStdString(f.rule);
    return out;
}

inline QByteArray describe(const ckpt::AuditResult& r)
{
    std::string s;
    for (const auto& f : r.findings)
        s += "\n  " + f.rule + " [" + ckpt::severityName(f.severity) + "] " + f.file + ": " + f.message;
    return q(s);
}

inline void writeText(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

} // namespace testsupport
