// SPDX-License-Identifier: MIT
#include "ui/copyaction.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QItemSelectionModel>

#include <algorithm>
#include <map>

QString copyText(const QAbstractItemView* view)
{
    QModelIndexList indexes = view->selectionModel() ? view->selectionModel()->selectedIndexes() : QModelIndexList();
    if (indexes.isEmpty() && view->currentIndex().isValid())
        indexes.append(view->currentIndex());
    // Visual order: by parent chain then row, then column.
    std::sort(indexes.begin(), indexes.end(), [view](const QModelIndex& a, const QModelIndex& b) {
        const QRect ra = view->visualRect(a), rb = view->visualRect(b);
        return ra.top() != rb.top() ? ra.top() < rb.top() : a.column() < b.column();
    });
    QStringList lines;
    QStringList cells;
    QModelIndex rowStart;
    for (const QModelIndex& index : indexes) {
        if (rowStart.isValid() && (index.row() != rowStart.row() || index.parent() != rowStart.parent())) {
            lines.append(cells.join(QLatin1Char('\t')));
            cells.clear();
        }
        if (cells.isEmpty())
            rowStart = index;
        cells.append(index.data(Qt::DisplayRole).toString());
    }
    if (!cells.isEmpty())
        lines.append(cells.join(QLatin1Char('\t')));
    return lines.join(QLatin1Char('\n'));
}

void installCopyAction(QAbstractItemView* view)
{
    auto* copy = new QAction(QApplication::translate("copyaction", "&Copy"), view);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    QObject::connect(copy, &QAction::triggered, view, [view] { QGuiApplication::clipboard()->setText(copyText(view)); });
    view->addAction(copy);
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
}
