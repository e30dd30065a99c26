"""Presets and the guided tour of the representation-learning page. Every fact a text states
is a Claim: measured by the function the page draws from, with the bound the text states
(ui/claims.py); a text states bounds, the card prints the measured value beside them."""
from __future__ import annotations

from engine.representations.contrastive import AUGMENTATIONS
from topics.representations.compute import (CL_STEPS, DEC_STEPS, ari_gap, ari_of, code_gain,
                                            code_probe, contrastive_gain,
                                            contrastive_over_code, contrastive_probe,
                                            dec_gain, few_accuracy, kmeans_code_accuracy,
                                            kmeans_pixels, map_knn, pixels_probe,
                                            probe_baseline, prototype_accuracy, pull_ratio,
                                            spread_accuracy, spread_gain,
                                            spread_reached)
from ui.claims import PERCENT, Claim, OnRun
from ui.widgets import Preset, Step

# ----------------------------------------------------------------------------- settings
SHAPE = {"re_n": 1500, "re_noise": 0.05, "re_k": 0, "re_eps": 0.3, "re_linkage": "ward"}
MOONS = {**SHAPE, "re_shape": "moons"}
CIRCLES = {**SHAPE, "re_shape": "circles"}
ANISO = {**SHAPE, "re_shape": "anisotropic"}
VARIED = {**SHAPE, "re_shape": "varied"}
DEC = {"re_dec_k": 10, "re_alpha": 1.0, "re_lr": 0.003, "re_gamma": 0.0, "re_interval": 20}
FEW = {"re_per_class": 1, "re_right": "spread", "re_spread_shape": "moons", "re_labelled": 1,
       "re_spread_steps": 100}
FEW5 = {**FEW, "re_per_class": 5}
EARLY = {**FEW, "re_spread_steps": 3}
PROTOS = {**FEW, "re_per_class": 5, "re_right": "protos"}
SIMCLR = {"re_aug": list(AUGMENTATIONS), "re_tau": 0.2, "re_cl_lr": 0.003}
MAPS = {"re_map_n": 300, "re_perplexity": 30}


def _ari(method: str, what: str, **bound) -> Claim:
    return Claim(f"ARI of {what}", lambda s: ari_of(s, method), **bound)


# ----------------------------------------------------------------------------- claims
C_MOONS = (_ari("kmeans", "k-means on the moons", hi=0.6),
           _ari("spectral", "spectral clustering on the moons", lo=0.95),
           Claim("spectral minus k-means ARI", ari_gap, lo=0.4))
C_CIRCLES = (_ari("kmeans", "k-means on the circles", hi=0.05),
             _ari("spectral", "spectral clustering on the circles", lo=0.95),
             _ari("dbscan", "DBSCAN on the circles", lo=0.95))
C_ANISO = (_ari("gmm", "the Gaussian mixture on stretched blobs", lo=0.95),
           _ari("kmeans", "k-means on stretched blobs", hi=0.7))
C_VARIED = (_ari("gmm", "the Gaussian mixture, varied densities", lo=0.9),
            _ari("dbscan", "DBSCAN with ε = 0.3, varied densities", hi=0.5))
C_DEC = (Claim(f"DEC minus k-means on the code, cluster accuracy, {DEC_STEPS} iterations",
               dec_gain, lo=0.01, slow=True, fmt=PERCENT),)
C_KMEANS = (Claim("k-means on the code, cluster accuracy (DEC's start)",
                  kmeans_code_accuracy, lo=0.6, hi=0.8, fmt=PERCENT),
            Claim("k-means on raw pixels, cluster accuracy", kmeans_pixels, lo=0.7,
                  fmt=PERCENT))
C_PULL = (Claim("mean pull at the start, 10% most confident / least confident half",
                pull_ratio, lo=3),)
C_FEW = (Claim("label spreading minus pixel classifier, 1 label per class", spread_gain,
               lo=0.1, fmt=PERCENT),
         Claim("autoencoder code minus raw pixels, 1 label per class", code_gain, hi=0.02,
               fmt=PERCENT))
C_FEW5 = (Claim("label spreading, 5 labels per class", lambda s: few_accuracy(s, "spread"),
                lo=0.9, fmt=PERCENT),
          Claim("logistic regression on pixels, 5 labels per class",
                lambda s: few_accuracy(s, "pixels"), hi=0.9, fmt=PERCENT))
C_SPREAD = (Claim("unlabelled moons points given their true class", spread_accuracy,
                  lo=0.95, fmt=PERCENT),)
C_PROTOS = (Claim("nearest prototype in the code, 5 labels per class", prototype_accuracy,
                  lo=0.75, fmt=PERCENT),)
C_SIMCLR = (Claim(f"probe on SimCLR features after {CL_STEPS} iterations, 5 labels per class",
                  contrastive_probe, lo=0.84, slow=True, fmt=PERCENT,
                  run=OnRun(CL_STEPS, ("probe",))),
            Claim(f"SimCLR features minus AE code, probe after {CL_STEPS} iterations",
                  contrastive_over_code, lo=0.02, slow=True, fmt=PERCENT,
                  run=OnRun(CL_STEPS, ("probe",),
                            combine=lambda p: p - probe_baseline("code"))))
C_PROBES = (Claim("probe on the AE code minus on raw pixels, 5 labels per class",
                  lambda s: code_probe(s) - pixels_probe(s), hi=0.0, fmt=PERCENT),)
C_FEW_CL = (Claim("shipped SimCLR features minus raw pixels, 1 label per class",
                  contrastive_gain, lo=0.05, fmt=PERCENT),)
C_MAPS = tuple(Claim(f"5-NN accuracy in the t-SNE map of the {what}",
                     lambda s, key=key: map_knn(s, key), lo=0.9, fmt=PERCENT)
               for key, what in (("contrastive", "SimCLR features"), ("code", "AE code"),
                                 ("pixels", "raw pixels")))
C_EARLY = (Claim("unlabelled points reached after 3 iterations", spread_reached, hi=0.5,
                 fmt=PERCENT),)

# ----------------------------------------------------------------------------- presets
PRESETS = {
    "Moons: k-means cuts, spectral follows": Preset(
        MOONS, "k-means splits the moons with a straight cut (ARI below 0.6); spectral "
               "clustering follows the neighbour graph along each moon (ARI above 0.95).",
        "shapes", C_MOONS),
    "Circles: no centre helps": Preset(
        CIRCLES, "Both rings share a centre: k-means does no better than chance (ARI below "
                 "0.05) while spectral clustering and DBSCAN find both rings (ARI above 0.95).",
        "shapes", C_CIRCLES),
    "Stretched blobs need a covariance": Preset(
        ANISO, "Sheared blobs: a Gaussian mixture with full covariances fits them (ARI above "
               "0.95), k-means' round clusters do not (ARI below 0.7).", "shapes", C_ANISO),
    "Varied densities fool DBSCAN": Preset(
        VARIED, "One radius ε cannot suit a tight blob and a wide one: DBSCAN stays below "
                "ARI 0.5 while the Gaussian mixture gets above 0.9.", "shapes", C_VARIED),
    "DEC sharpens the digit clusters": Preset(
        DEC, f"Press Play: within {DEC_STEPS} iterations DEC's cluster accuracy rises at "
             "least 1 point above k-means on the code it started from (between 60% and "
             "80%).", "dec", C_DEC + C_KMEANS[:1]),
    "One label per digit": Preset(
        FEW, "With one labelled digit per class, label spreading over all digits beats a "
             "classifier on those ten by more than 10 points; the autoencoder's code gains "
             "at most 2 points over raw pixels, the SimCLR features more than 5.", "few",
        C_FEW + C_FEW_CL + C_SPREAD),
    "SimCLR learns digits without labels": Preset(
        SIMCLR, f"Press Play: after {CL_STEPS} iterations a linear probe on the SimCLR "
                "features, fitted to 5 labelled digits per class, gets above 84% of the "
                "held-out digits right, at least 2 points more than the same probe on the "
                "autoencoder's code, which does worse than raw pixels.", "contrastive",
        C_SIMCLR + C_PROBES),
    "t-SNE: every map separates the digits": Preset(
        MAPS, "In the t-SNE maps of SimCLR features, autoencoder code and raw pixels alike, "
              "more than 90% of the digits have mostly their own digit among their 5 nearest "
              "neighbours.", "maps", C_MAPS),
    "Labels need iterations to travel": Preset(
        EARLY, "After 3 iterations the labels have reached fewer than half of the points: "
               "each iteration carries them one neighbour further.", "few", C_EARLY),
    "Prototypes from five labels": Preset(
        PROTOS, "Average the codes of 5 labelled digits per class into a prototype: the "
                "nearest prototype gets above 75% of the held-out digits right.", "few",
        C_PROTOS),
}

STEPS = [
    Step("Clusters of another shape",
         "The moons are two clusters, but not round ones. k-means, which cuts space into "
         "regions around centres, scores an ARI below 0.6; spectral clustering, which "
         "follows chains of near neighbours, scores above 0.95.", MOONS, "shapes", C_MOONS),
    Step("Density and shape",
         "Switch to stretched blobs: a Gaussian mixture, whose clusters can be ellipses, "
         "fits them (ARI above 0.95) where k-means does not (below 0.7). Which algorithm is "
         "right depends on what a cluster should be.", ANISO, "shapes", C_ANISO),
    Step("Cluster in a learned space",
         "On the digits, k-means on an autoencoder's code reaches 60% to 80% accuracy. "
         f"Press Play: DEC moves the codes toward confident clusters and gains at least 1 "
         f"point within {DEC_STEPS} iterations.", DEC, "dec", C_KMEANS[:1] + C_DEC),
    Step("Who pulls the centres",
         "Bottom right: the loss's pull toward a centre grows with q_ij; at the start the "
         "10% most confident codes are pulled more than 3 times as hard as the doubtful "
         "half. DEC trusts its confident assignments, so the most typical digits move "
         "first; k-means on raw pixels (above 70%) is the bar it has to clear.", DEC, "dec",
         C_PULL + C_KMEANS[1:]),
    Step("Learning without labels",
         "SimCLR trains an encoder to tell two augmented views of the same digit from the "
         "views of all other digits; no label is used. Press Play: the partners' similarity "
         "(the off-centre diagonals) rises, and after "
         f"{CL_STEPS} iterations a linear probe on its features with 5 labels per class "
         "passes 84%, at least 2 points above the probe on the autoencoder's code.",
         SIMCLR, "contrastive", C_PROBES + C_SIMCLR),
    Step("Maps of the representations",
         "t-SNE draws each representation in 2-D keeping near neighbours near. Coloured by "
         "the digit none of them saw, all three maps keep the digits apart: more than 90% "
         "of the digits have mostly their own digit among their 5 nearest neighbours in "
         "each map. A map shows neighbourhoods, not what a linear classifier can use.",
         MAPS, "maps", C_MAPS),
    Step("Few labels, many digits",
         "With 5 labels per class a classifier on pixels stays below 90%, while label "
         "spreading, which also uses the unlabelled digits, gets above 90%.",
         FEW5, "few", C_FEW5),
    Step("Labels flow through clusters",
         "On the moons one label per class is enough: spreading along the neighbour graph "
         "gives more than 95% of the points their true class.", FEW, "few", C_SPREAD),
]
