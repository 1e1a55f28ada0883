# tabular_export.R: writes small classification sets of Debian's
# r-cran-mlbench (Leisch and Dimitriadou's collection of UCI data) as the
# CSV files examples/tabular.sh trains on, run as
#   Rscript examples/tabular_export.R OUTDIR
# For each set NAME: OUTDIR/NAME_train.csv and OUTDIR/NAME_test.csv, a
# random 70/30 split of the rows (set.seed(1) before each set, so the
# files are the same on every run), every feature a number, the class in
# the last column "label" as 0 .. C-1 (the levels of the factor in R's
# order), and OUTDIR/NAME.info with "features F classes C rows N".
# Rows with a missing value are dropped (BreastCancer's Bare.nuclei has
# 16), ordered factors become their level numbers, and Ionosphere's V2
# (0 in every row: nothing to standardise) is left out.

suppressMessages(library(mlbench))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) {
	cat("usage: Rscript tabular_export.R OUTDIR\n", file = stderr())
	quit(status = 2)
}
out <- args[1]

export <- function(name, df, class) {
	df <- na.omit(df)
	y <- as.integer(factor(df[[class]])) - 1L
	x <- df[, setdiff(names(df), class), drop = FALSE]
	for (col in names(x))
		x[[col]] <- as.numeric(if (is.factor(x[[col]])) as.integer(x[[col]]) else x[[col]])
	d <- data.frame(x, label = y)
	set.seed(1)
	train <- sample(nrow(d), round(0.7 * nrow(d)))
	write.csv(d[train, ], file.path(out, paste0(name, "_train.csv")), row.names = FALSE)
	write.csv(d[-train, ], file.path(out, paste0(name, "_test.csv")), row.names = FALSE)
	cat(sprintf("features %d classes %d rows %d\n", ncol(x), length(unique(y)), nrow(d)),
	    file = file.path(out, paste0(name, ".info")))
}

data(BreastCancer)
export("breastcancer", BreastCancer[, -1], "Class")
data(PimaIndiansDiabetes)
export("pima", PimaIndiansDiabetes, "diabetes")
data(Sonar)
export("sonar", Sonar, "Class")
data(Ionosphere)
export("ionosphere", Ionosphere[, -2], "Class")
data(Glass)
export("glass", Glass, "Type")
data(Vehicle)
export("vehicle", Vehicle, "Class")
data(Satellite)
export("satellite", Satellite, "classes")
