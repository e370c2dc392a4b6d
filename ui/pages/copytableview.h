// SPDX-License-Identifier: MIT
// A table view whose Ctrl+C and context-menu Copy put the selected cells on the clipboard as
// tab-separated text (rows by line), so any value on the data pages can be pasted into a terminal
// or a spreadsheet.
#pragma once

#include <QTableView>

class CopyTableView final : public QTableView {
    Q_OBJECT
public:
    explicit CopyTableView(QWidget* parent = nullptr);

    /// The selection as it would be copied.
    QString selectedText() const;
    void copySelection() const;

protected:
    // Ctrl+C reaching the view as a key press (no shortcut matched): the selection too, not
    // QAbstractItemView's current cell alone.
    void keyPressEvent(QKeyEvent* event) override;
};
