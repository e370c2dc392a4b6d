// SPDX-License-Identifier: MIT
// The Tensors tab's proxy: sorts like QSortFilterProxyModel and filters on the tensor's name read
// straight from its row, not through a QVariant of the Name column for each of a frontier model's
// 90k rows at every key typed (issue 16: a key answers within 50 ms).
#pragma once

#include <QSortFilterProxyModel>

class TensorListModel;

class TensorNameFilter final : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TensorNameFilter(TensorListModel* source, QObject* parent = nullptr);

    /// Rows whose name contains `text`, ignoring case (all rows for an empty text).
    void setNameFilter(const QString& text);
    /// Whether a text is set: without one every row is shown.
    bool filtering() const { return !m_text.isEmpty(); }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    TensorListModel* m_source;
    QString m_text;
};
