// SPDX-License-Identifier: MIT
#include "ui/pages/tensornamefilter.h"

#include "ui/pages/tensorlistmodel.h"

TensorNameFilter::TensorNameFilter(TensorListModel* source, QObject* parent)
    : QSortFilterProxyModel(parent)
    , m_source(source)
{
    setSourceModel(source);
}

void TensorNameFilter::setNameFilter(const QString& text)
{
    if (text == m_text)
        return;
    m_text = text;
    invalidateRowsFilter(); // the columns are the same whatever the filter
}

bool TensorNameFilter::filterAcceptsRow(int sourceRow, const QModelIndex&) const
{
    if (m_text.isEmpty())
        return true;
    const TensorRow* row = m_source->tensorAt(sourceRow);
    return row && row->name.contains(m_text, Qt::CaseInsensitive);
}
