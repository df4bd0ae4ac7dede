"""The 115 instances: id suffix, template, configuration and generation seed (80 train, 25 ID, 10 OOD)."""

ROWS = """
cv-train-01	cv-cifar10	healthy	10000
cv-train-02	cv-cifar10	input scale	10001
cv-train-03	cv-cifar10	rare class sampling	10002
cv-train-04	cv-cifar10	overaggressive crop	10003
cv-train-05	cv-cifar100	healthy	10010
cv-train-06	cv-cifar100	normalization scale	10011
cv-train-07	cv-cifar100	rare class sampling	10012
cv-train-08	cv-cifar100	overaggressive erasing	10013
cv-train-09	cv-fashion	healthy	10020
cv-train-10	cv-fashion	contrast scale	10021
cv-train-11	cv-fashion	excessive shear	10022
cv-train-12	cv-fashion	excessive regularization	10023
cv-train-13	cv-tgs	healthy	10030
cv-train-14	cv-tgs	soft mask resize	10031
cv-train-15	cv-tgs	wrong positive weight	10032
cv-train-16	cv-tgs	overconservative threshold	10033
cv-id-01	cv-cifar10	input scale	20000
cv-id-02	cv-cifar100	rare class sampling	20001
cv-id-03	cv-fashion	excessive regularization	20002
cv-id-04	cv-tgs	soft mask resize	20003
cv-id-05	cv-cifar10	healthy	20009
cv-ood-01	cv-aptos	overaggressive crop	30000
cv-ood-02	cv-rsna	healthy	30001
nlp-train-01	nlp-imdb	healthy	11000
nlp-train-02	nlp-imdb	short context	11001
nlp-train-03	nlp-imdb	unmasked pooling	11002
nlp-train-04	nlp-imdb	class imbalance	11003
nlp-train-05	nlp-spooky	healthy	11010
nlp-train-06	nlp-spooky	vocabulary bottleneck	11011
nlp-train-07	nlp-spooky	short context	11012
nlp-train-08	nlp-spooky	overconfident probabilities	11013
nlp-train-09	nlp-feedback	healthy	11020
nlp-train-10	nlp-feedback	short context	11021
nlp-train-11	nlp-feedback	missing target inverse	11022
nlp-train-12	nlp-feedback	excessive regularization	11023
nlp-train-13	nlp-textnorm	healthy	11030
nlp-train-14	nlp-textnorm	case collapse	11031
nlp-train-15	nlp-textnorm	lost sentence context	11032
nlp-train-16	nlp-textnorm	rare type undersampling	11033
nlp-id-01	nlp-imdb	short context	21000
nlp-id-02	nlp-spooky	short context	21001
nlp-id-03	nlp-feedback	excessive regularization	21002
nlp-id-04	nlp-textnorm	case collapse	21003
nlp-id-05	nlp-spooky	healthy	21009
nlp-ood-01	nlp-ai4code	short context	31000
nlp-ood-02	nlp-babylm	padding in loss	31001
tabular-train-01	tab-house	healthy	12000
tabular-train-02	tab-house	zero imputation	12001
tabular-train-03	tab-house	integer category encoding	12002
tabular-train-04	tab-house	missing target inverse	12003
tabular-train-05	tab-spaceship	healthy	12010
tabular-train-06	tab-spaceship	numeric missing sentinel	12011
tabular-train-07	tab-spaceship	categorical missing collision	12012
tabular-train-08	tab-spaceship	column order mismatch	12013
tabular-train-09	tab-titanic	healthy	12020
tabular-train-10	tab-titanic	unscaled features	12021
tabular-train-11	tab-titanic	missingness sentinel	12022
tabular-train-12	tab-titanic	excessive regularization	12023
tabular-train-13	tab-nomad	healthy	12030
tabular-train-14	tab-nomad	missing target inverse	12031
tabular-train-15	tab-nomad	descriptor scaling	12032
tabular-train-16	tab-nomad	overstrong regularization	12033
tabular-id-01	tab-house	zero imputation	22000
tabular-id-02	tab-spaceship	categorical missing collision	22001
tabular-id-03	tab-titanic	excessive regularization	22002
tabular-id-04	tab-nomad	missing target inverse	22003
tabular-id-05	tab-titanic	healthy	22009
tabular-ood-01	tab-california	global mean imputation	32000
tabular-ood-02	tab-breast-calibration	overconfident probabilities	32001
time_series-train-01	ts-etth-forecast	healthy	13000
time_series-train-02	ts-etth-forecast	global scaler	13001
time_series-train-03	ts-etth-forecast	output channel permutation	13002
time_series-train-04	ts-etth-forecast	unnecessarily short context	13003
time_series-train-05	ts-weather	healthy	13010
time_series-train-06	ts-weather	global scaler	13011
time_series-train-07	ts-weather	output channel permutation	13012
time_series-train-08	ts-weather	excessive regularization	13013
time_series-train-09	ts-etth-impute	healthy	13020
time_series-train-10	ts-etth-impute	wrong loss region	13021
time_series-train-11	ts-etth-impute	missing mask input	13022
time_series-train-12	ts-etth-impute	global scaler	13023
time_series-train-13	ts-ventilator	healthy	13030
time_series-train-14	ts-ventilator	wrong loss region	13031
time_series-train-15	ts-ventilator	time order reversal	13032
time_series-train-16	ts-ventilator	missing group resets	13033
time_series-id-01	ts-etth-forecast	global scaler	23000
time_series-id-02	ts-weather	output channel permutation	23001
time_series-id-03	ts-etth-impute	global scaler	23002
time_series-id-04	ts-ventilator	wrong loss region	23003
time_series-id-05	ts-ventilator	healthy	23009
time_series-ood-01	ts-ecl	global scaler	33000
time_series-ood-02	ts-crypto	healthy	33001
graph-train-01	graph-cora	healthy	14000
graph-train-02	graph-cora	feature scale	14001
graph-train-03	graph-cora	oversmoothing	14002
graph-train-04	graph-cora	excessive regularization	14003
graph-train-05	graph-citeseer	healthy	14010
graph-train-06	graph-citeseer	missing self information	14011
graph-train-07	graph-citeseer	feature scale	14012
graph-train-08	graph-citeseer	excessive regularization	14013
graph-train-09	graph-arxiv	healthy	14020
graph-train-10	graph-arxiv	feature scale	14021
graph-train-11	graph-arxiv	undersampled neighborhood	14022
graph-train-12	graph-arxiv	excessive regularization	14023
graph-train-13	graph-clrs	healthy	14030
graph-train-14	graph-clrs	hint misalignment	14031
graph-train-15	graph-clrs	padding in loss	14032
graph-train-16	graph-clrs	insufficient message rounds	14033
graph-id-01	graph-cora	feature scale	24000
graph-id-02	graph-citeseer	feature scale	24001
graph-id-03	graph-arxiv	excessive regularization	24002
graph-id-04	graph-clrs	hint misalignment	24003
graph-id-05	graph-cora	healthy	24009
graph-ood-01	graph-bbbp	missing bond features	34000
graph-ood-02	graph-bace	padding in pooling	34001
"""


def instances():
    out = []
    for line in ROWS.strip().split("\n"):
        suffix, template, config, seed = line.split("\t")
        domain, split = suffix.rsplit("-", 2)[0], suffix.rsplit("-", 2)[1]
        out.append({"id": "mltb-v1-" + suffix, "template": template, "config": config, "seed": int(seed), "split": split, "domain": domain})
    return out
