// SPDX-License-Identifier: MIT
// The "Open recent" list, kept in QSettings (most recent first, at most ten).
#pragma once

#include <QStringList>

class RecentFiles {
public:
    static constexpr int MaxEntries = 10;

    static QStringList load();
    static void add(const QString& path);
    static void clear();
};
