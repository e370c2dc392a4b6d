// SPDX-License-Identifier: MIT
// Helpers the two safetensors tests share (tst_safetensors.cpp, tst_safetensors_index.cpp): parsing a
// file held in memory, the message it is refused with, and the check that its tensors tile the data.
#pragma once

#include "ckpt/formats/safetensors_format.h"

#include <QByteArray>
#include <QString>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace testsupport {

inline ckpt::SafetensorsHeader parse(const QByteArray& file)
{
    return ckpt::parseSafetensors(
        std::as_bytes(std::span<const char>(file.constData(), static_cast<std::size_t>(file.size()))));
}

/// The FormatError message parsing `file` gives, or a null string when it parses.
inline QString errorOf(const QByteArray& file)
{
    try {
        parse(file);
    } catch (const ckpt::FormatError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

/// Sorted by begin, the tensors cover [8+N, file size) exactly.
inline bool tilesData(const ckpt::SafetensorsHeader& header, quint64 fileSize, QString* why)
{
    std::vector<const ckpt::SafetensorsTensor*> sorted;
    for (const auto& t : header.tensors)
        sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
        return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
    });
    quint64 at = 8 + header.headerSize;
    for (const auto* t : sorted) {
        if (t->begin != at || t->end < t->begin) {
            *why = QStringLiteral("%1 at [%2, %3), expected begin %4")
                       .arg(QString::fromStdString(t->name)).arg(t->begin).arg(t->end).arg(at);
            return false;
        }
        at = t->end;
    }
    if (at != fileSize) {
        *why = QStringLiteral("data ends at %1, file has %2").arg(at).arg(fileSize);
        return false;
    }
    return true;
}

/// Runs `parse` with the fast and the strict JSON reader; a null string when both give the same
/// result or the same error, else what each gave.
template<typename Parse>
QString readersDisagree(Parse parse)
{
    using Result = decltype(parse(ckpt::SafetensorsJsonReader::Fast));
    Result results[2];
    QString outcome[2];
    for (int i = 0; i < 2; ++i) {
        try {
            results[i] = parse(i == 0 ? ckpt::SafetensorsJsonReader::Fast : ckpt::SafetensorsJsonReader::Strict);
            outcome[i] = QStringLiteral("accepted");
        } catch (const ckpt::FormatError& e) {
            outcome[i] = QString::fromUtf8(e.what());
        }
    }
    if (outcome[0] == outcome[1] && (outcome[0] != QLatin1String("accepted") || results[0] == results[1]))
        return {};
    return QStringLiteral("fast: %1; strict: %2").arg(outcome[0], outcome[1]);
}

/// The two readers over a file's header text (when its length fits the file).
inline QString headerReadersDisagree(const QByteArray& file)
{
    if (file.size() < 8)
        return {};
    quint64 n = 0;
    for (int i = 0; i < 8; ++i)
        n |= static_cast<quint64>(static_cast<unsigned char>(file[i])) << (8 * i);
    if (n > static_cast<quint64>(file.size() - 8))
        return {};
    const std::string_view text(file.constData() + 8, static_cast<std::size_t>(n));
    return readersDisagree([&](ckpt::SafetensorsJsonReader r) { return ckpt::parseSafetensorsHeaderJson(text, r); });
}

/// The two readers over an index text.
inline QString indexReadersDisagree(const QByteArray& json)
{
    const std::string_view text(json.constData(), static_cast<std::size_t>(json.size()));
    return readersDisagree([&](ckpt::SafetensorsJsonReader r) { return ckpt::parseSafetensorsIndex(text, r); });
}

} // namespace testsupport
