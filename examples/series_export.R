# series_export.R: writes R's monthly sunspot numbers (datasets::sunspot.month,
# in Debian's r-base-core: 3,177 months from January 1749 to September 2013,
# the mean daily sunspot number of each month) as the windowed CSV files
# examples/series.sh trains on, run as
#   Rscript examples/series_export.R OUTDIR [W]
# The task: the next month's number from the W previous months (default 60,
# five years: about half of an 11-year solar cycle).
#
# The split is in time, by the month of the target, so no test month is ever
# seen in training: training targets from 1749 + W months to December 1950,
# validation targets 1951-1965 (they choose the checkpoint's epoch),
# calibration targets 1966-1980 (they calibrate the split conformal
# intervals, docs/conformal.md, and nothing else), test targets January
# 1981 to September 2013 (the last 393 months, three cycles).  A window may
# reach back into an earlier part: its inputs are past observations, which
# a forecaster has.
#
# The calibration block is its own: months that chose the epoch would bias
# the conformal quantile (the checkpoint kept fits them best), and it is
# the block just before the test months, the closest in time a forecaster
# could have calibrated on.  Conformal coverage assumes the calibration and
# test months exchangeable, which a time series only approximates (the
# solar cycles differ in height, and errors of neighbouring months are
# correlated), so the coverage on the test months may miss the level by
# more than its sampling error.  The years 1951-1980, which used to be
# all validation, are split in two rather than the training years
# shortened, so the training months and the standardisation below stay
# as they were.
#
# The values are standardised with the mean and standard deviation of the
# training months only (1749-1950), z = (v - mean) / sd, inputs and targets
# alike; OUTDIR/series.info holds "mean M sd S window W train N valid N
# calib N test N", so RMSE and MAE in sunspot numbers are S times those of z, and an NLL
# in sunspot numbers is the NLL of z plus log S.
#
# OUTDIR/series_train.csv, series_valid.csv, series_calib.csv,
# series_test.csv: columns
# x0 ... x(W-1) (the oldest month first, x(W-1) the month before the target)
# and y.  As a [1, W] signal for conv1d or a [W, 1] sequence for gru the W
# values lie in the same order (docs/language.md, input).
#
# OUTDIR/series_baseline.json: the persistence baseline on the test months,
# predicting the last value, y = x(W-1), with a Gaussian of that mean whose
# standard deviation is the RMS of persistence's errors on the training
# months: NLL (of z), RMSE, MAE (of z) and the coverage of its central
# 50/90/95% intervals.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1 || length(args) > 2) {
	cat("usage: Rscript series_export.R OUTDIR [W]\n", file = stderr())
	quit(status = 2)
}
out <- args[1]
w <- if (length(args) == 2) as.integer(args[2]) else 60L

s <- datasets::sunspot.month
v <- as.numeric(s)
year <- floor(as.numeric(time(s)) + 1e-6)
train_months <- year <= 1950
m <- mean(v[train_months])
sdv <- sd(v[train_months])
z <- (v - m) / sdv

targets <- (w + 1):length(z)
x <- t(sapply(targets, function(t) z[(t - w):(t - 1)]))
colnames(x) <- paste0("x", 0:(w - 1))
all <- data.frame(x, y = z[targets])
ty <- year[targets]
part <- list(train = ty <= 1950, valid = ty >= 1951 & ty <= 1965,
             calib = ty >= 1966 & ty <= 1980, test = ty >= 1981)
for (p in names(part))
	write.csv(all[part[[p]], ], file.path(out, paste0("series_", p, ".csv")),
	          row.names = FALSE, quote = FALSE)
cat(sprintf("mean %.9g sd %.9g window %d train %d valid %d calib %d test %d\n", m, sdv, w,
            sum(part$train), sum(part$valid), sum(part$calib), sum(part$test)),
    file = file.path(out, "series.info"))

last <- paste0("x", w - 1)
tr <- all[part$train, ]
sigma <- sqrt(mean((tr$y - tr[[last]])^2))
te <- all[part$test, ]
e <- te$y - te[[last]]
inside <- function(c) mean(abs(e) <= qnorm((1 + c) / 2) * sigma)
cat(sprintf(paste0("{\"n\": %d, \"sigma\": %.6f, \"nll\": %.6f, \"rmse\": %.6f, \"mae\": %.6f, ",
                   "\"coverage_50\": %.4f, \"coverage_90\": %.4f, \"coverage_95\": %.4f}\n"),
            nrow(te), sigma, -mean(dnorm(e, 0, sigma, log = TRUE)), sqrt(mean(e^2)),
            mean(abs(e)), inside(0.5), inside(0.9), inside(0.95)),
    file = file.path(out, "series_baseline.json"))
