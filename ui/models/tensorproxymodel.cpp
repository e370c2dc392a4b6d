// SPDX-License-Identifier: MIT
#include "ui/models/tensorproxymodel.h"

#include "ui/models/tensortablemodel.h"

TensorProxyModel::TensorProxyModel(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(TensorTableModel::SortRole);
    setFilterKeyColumn(TensorTableModel::Key);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void TensorProxyModel::setKeyFilter(const QString& text)
{
    setFilterFixedString(text);
}
