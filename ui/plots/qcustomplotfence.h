// SPDX-License-Identifier: MIT
// The one place qcustomplot.h is included from (plot .cpp files only; headers forward-declare).
// QCustomPlot 2.1 still uses `foreach`, which our targets switch off (QT_NO_FOREACH): give it a
// range-for for the length of the include.
#pragma once

#define foreach(variable, container) for (variable : container)
#include <qcustomplot.h>
#undef foreach
