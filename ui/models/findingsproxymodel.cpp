// SPDX-License-Identifier: MIT
#include "ui/models/findingsproxymodel.h"

#include "ui/models/findingsmodel.h"

FindingsProxyModel::FindingsProxyModel(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(FindingsModel::SortRole);
}

void FindingsProxyModel::setMinimumSeverity(int severity)
{
    if (severity == m_minimumSeverity)
        return;
    m_minimumSeverity = severity;
    invalidateFilter();
}

void FindingsProxyModel::setComponent(int component)
{
    if (component == m_component)
        return;
    m_component = component;
    invalidateFilter();
}

bool FindingsProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (index.data(FindingsModel::SeverityRole).toInt() < m_minimumSeverity)
        return false;
    return m_component < 0 || index.data(FindingsModel::ComponentRole).toInt() == m_component;
}
