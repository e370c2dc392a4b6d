// SPDX-License-Identifier: MIT
#include "ui/models/comparisonmodel.h"

#include "ui/palettecolors.h"
#include "ui/textformat.h"

#include <QColor>
#include <QGuiApplication>
#include <QPalette>

namespace {

constexpr quintptr kSectionRow = 0; // children carry section row + 1

// Translucent, so the same tint reads on light and dark bases.
QVariant statusBackground(CompareStatus status)
{
    switch (status) {
    case CompareStatus::Same:
        return {};
    case CompareStatus::Changed: {
        QColor c = severityColor(1);
        c.setAlpha(50);
        return c;
    }
    case CompareStatus::OnlyA:
    case CompareStatus::OnlyB: {
        QColor c = severityColor(0);
        c.setAlpha(50);
        return c;
    }
    case CompareStatus::Inconsistent: {
        QColor c = severityColor(2);
        c.setAlpha(70);
        return c;
    }
    }
    return {};
}

int rank(CompareStatus status)
{
    switch (status) {
    case CompareStatus::Same:
        return 0;
    case CompareStatus::OnlyA:
    case CompareStatus::OnlyB:
        return 1;
    case CompareStatus::Changed:
        return 2;
    case CompareStatus::Inconsistent:
        return 3;
    }
    return 0;
}

} // namespace

ComparisonModel::ComparisonModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void ComparisonModel::setComparison(StateComparison comparison)
{
    beginResetModel();
    m_comparison = std::move(comparison);
    rebuild();
    endResetModel();
}

void ComparisonModel::setDifferencesOnly(bool only)
{
    if (only == m_differencesOnly)
        return;
    beginResetModel();
    m_differencesOnly = only;
    rebuild();
    endResetModel();
}

void ComparisonModel::rebuild()
{
    m_visible.clear();
    for (const CompareSection& section : m_comparison.sections) {
        std::vector<const CompareRow*> rows;
        for (const CompareRow& row : section.rows) {
            if (!m_differencesOnly || row.status != CompareStatus::Same)
                rows.push_back(&row);
        }
        m_visible.push_back(std::move(rows));
    }
}

QModelIndex ComparisonModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kSectionRow);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex ComparisonModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kSectionRow)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kSectionRow);
}

int ComparisonModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_visible.size());
    if (parent.column() > 0 || parent.internalId() != kSectionRow)
        return 0;
    return static_cast<int>(m_visible[static_cast<std::size_t>(parent.row())].size());
}

int ComparisonModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant ComparisonModel::sectionData(std::size_t section, int column, int role) const
{
    const CompareSection& s = m_comparison.sections[section];
    CompareStatus worst = CompareStatus::Same;
    int changed = 0;
    for (const CompareRow& row : s.rows) {
        if (row.status != CompareStatus::Same)
            ++changed;
        if (rank(row.status) > rank(worst))
            worst = row.status;
    }
    if (role == StatusRole)
        return static_cast<int>(worst);
    if (role == Qt::BackgroundRole && column == Status)
        return statusBackground(worst);
    if (role != Qt::DisplayRole)
        return {};
    if (column == Field)
        return fromUtf8(s.component);
    if (column == Status)
        return changed ? tr("%1 of %2 differ").arg(changed).arg(s.rows.size()) : tr("all %1 same").arg(s.rows.size());
    return {};
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == kSectionRow)
        return sectionData(static_cast<std::size_t>(index.row()), index.column(), role);
    const CompareRow& row = *m_visible[index.internalId() - 1][static_cast<std::size_t>(index.row())];
    switch (role) {
    case StatusRole:
        return static_cast<int>(row.status);
    case Qt::BackgroundRole:
        return statusBackground(row.status);
    case Qt::ToolTipRole:
        if (!row.note.empty())
            return fromUtf8(row.note);
        [[fallthrough]];
    case Qt::DisplayRole:
        switch (static_cast<Column>(index.column())) {
        case Field:
            return fromUtf8(row.field);
        case A:
            return row.a.empty() ? QStringLiteral("—") : fromUtf8(row.a);
        case B:
            return row.b.empty() ? QStringLiteral("—") : fromUtf8(row.b);
        case Status:
            return QLatin1String(compareStatusName(row.status));
        case ColumnCount:
            break;
        }
    }
    return {};
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case Field:
            return tr("Component / value");
        case A:
            return tr("A");
        case B:
            return tr("B");
        case Status:
            return tr("Status");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case Field:
            return tr("The part of the training state, then each value saved in it");
        case A:
        case B:
            return tr("The value in checkpoint %1; — when it is not saved there").arg(section == A ? QStringLiteral("A") : QStringLiteral("B"));
        case Status:
            return tr("changed; only in A / B; inconsistent: moved differently from the global step "
                      "(a scheduler stepped twice, a counter that went backwards)");
        case ColumnCount:
            break;
        }
    }
    return {};
}
