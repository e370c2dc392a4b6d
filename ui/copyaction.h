// SPDX-License-Identifier: MIT
// Copy for every item view: Ctrl+C and a context-menu entry copy the selected cells (tab between
// columns, one line per row), or the current cell when nothing is selected.
#pragma once

class QAbstractItemView;
class QString;

void installCopyAction(QAbstractItemView* view);

/// The text Ctrl+C puts on the clipboard for `view` now.
QString copyText(const QAbstractItemView* view);
