# counts_export.R: writes R's quakes data set (package datasets, in Debian's
# r-base-core: 1,000 seismic events near Fiji since 1964, from the Harvard
# PRIM-H project) as the CSV files examples/counts.sh trains on, run as
#   Rscript examples/counts_export.R OUTDIR [SEED]
# The task: the number of stations that reported an event (`stations`, a
# count from 10 to 132) from its latitude, longitude, depth (km) and
# Richter magnitude.
#
# OUTDIR/counts_train.csv, counts_valid.csv, counts_calib.csv,
# counts_test.csv: a random 600/100/100/200 split of the 1,000 rows
# (set.seed(SEED), 1 by default, so the files are the same on every run;
# counts.sh's repeated splits pass 2, 3, ...), columns
# lat,long,depth,mag,stations.  The validation rows choose the checkpoint's
# epoch; the calibration rows calibrate the split conformal intervals
# (docs/conformal.md) and nothing else; the test rows are scored once.
#
# The calibration rows are the second half of what used to be 200
# validation rows: rows that chose the epoch would make the conformal
# quantile biased (the checkpoint kept is the one that fits them best, so
# their scores are smaller than a fresh example's and the intervals too
# narrow).  Halving the validation rows, rather than re-splitting the
# 1,000 rows, keeps the 600 training rows and the 200 test rows (and so the
# baselines below) exactly as they were; 100 rows still choose an epoch
# from a smooth validation curve, and a larger calibration share would
# hardly help: with 200 test rows the coverage's sampling sd is about
# sqrt(0.09/100 + 0.09/200) = 3.7 points, and 3.2 with 150 calibration
# rows.  No split of 1,000 rows brings it under 1.5 points.
#
# OUTDIR/counts_baseline.json: the constant-rate baseline, the metrics of
# eval for a model that ignores the inputs and predicts Poisson(r) with r the
# mean of the training counts, on the test rows: NLL (mean of -log P(y)),
# RMSE, MAE, and the coverage of the central 50/90/95% intervals as
# docs/metrics.md defines it for counts (y inside when F(y) >= (1 - c)/2 and
# F(y - 1) < (1 + c)/2).  Also the same for a negative binomial of that
# mean whose dispersion matches the training counts' variance (method of
# moments), the honest constant baseline for overdispersed counts.

args <- commandArgs(trailingOnly = TRUE)
seed <- if (length(args) == 2) suppressWarnings(as.integer(args[2])) else 1L
if (length(args) < 1 || length(args) > 2 || is.na(seed)) {
	cat("usage: Rscript counts_export.R OUTDIR [SEED]\n", file = stderr())
	quit(status = 2)
}
out <- args[1]

d <- datasets::quakes[, c("lat", "long", "depth", "mag", "stations")]
set.seed(seed)
perm <- sample(nrow(d))
part <- list(train = perm[1:600], valid = perm[601:700], calib = perm[701:800],
             test = perm[801:1000])
for (p in names(part))
	write.csv(d[part[[p]], ], file.path(out, paste0("counts_", p, ".csv")), row.names = FALSE,
	          quote = FALSE)

y <- d$stations[part$test]
ytrain <- d$stations[part$train]
rate <- mean(ytrain)
# rho from Var = m + m^2 / rho
rho <- rate^2 / (var(ytrain) - rate)

# The metrics of a constant predictive with log-probability logp, CDF cdf and
# mean m, as flat JSON keys PREFIX_nll, ... (one-line JSON, flat, so that
# the example scripts' json_get reads them).
metrics <- function(prefix, logp, cdf, m) {
	inside <- function(c) mean(cdf(y) >= (1 - c) / 2 & cdf(y - 1) < (1 + c) / 2)
	v <- c(nll = -mean(logp(y)), rmse = sqrt(mean((y - m)^2)), mae = mean(abs(y - m)),
	       coverage_50 = inside(0.5), coverage_90 = inside(0.9), coverage_95 = inside(0.95))
	paste(sprintf("\"%s_%s\": %.6f", prefix, names(v), v), collapse = ", ")
}
pois <- metrics("poisson", function(v) dpois(v, rate, log = TRUE),
                function(v) ppois(v, rate), rate)
nb <- metrics("negbinomial", function(v) dnbinom(v, size = rho, mu = rate, log = TRUE),
              function(v) pnbinom(v, size = rho, mu = rate), rate)
cat(sprintf("{\"n\": %d, \"rate\": %.6f, \"dispersion\": %.6f, %s, %s}\n", length(y), rate,
            rho, pois, nb),
    file = file.path(out, "counts_baseline.json"))
