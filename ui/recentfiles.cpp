// SPDX-License-Identifier: MIT
#include "ui/recentfiles.h"

#include <QFileInfo>
#include <QSettings>

namespace {
QString key()
{
    return QStringLiteral("recentFiles");
}
} // namespace

QStringList RecentFiles::load()
{
    return QSettings().value(key()).toStringList();
}

void RecentFiles::add(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = load();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > MaxEntries)
        list.removeLast();
    QSettings().setValue(key(), list);
}

void RecentFiles::clear()
{
    QSettings().remove(key());
}
