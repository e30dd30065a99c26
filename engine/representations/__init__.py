"""Representation learning: the page's maths, free of any UI (engine/ never imports Streamlit
or Plotly).

    shapes.py     the toy clustering problems and scikit-learn's clustering methods on them
    metrics.py    adjusted Rand index and cluster accuracy (Hungarian matching)
    dec.py        DEC's soft assignment, target distribution, loss and gradient; the digits
                  autoencoder (shipped weights)
    trainer.py    DECTrainer, the live trainer (engine.training.TrainerBase)
    fewlabels.py  linear probes with few labels, label spreading, prototypes
    contrastive.py  SimCLR: augmentations, the NT-Xent loss, ContrastiveTrainer (live), the
                  shipped encoder's features
    maps.py       t-SNE maps of representations and their k-NN accuracy"""
from __future__ import annotations

from engine.representations.contrastive import (AUGMENTATIONS, ContrastiveTrainer, augment,
                                                check_augmentations, nt_xent, simclr_features)
from engine.representations.dec import (Autoencoder, digit_codes, digits_pixels, kl_loss,
                                        load_autoencoder, pull_toward, shipped_state,
                                        soft_assign, target_distribution, gradient_terms)
from engine.representations.fewlabels import (probe_accuracy, prototypes, spread_labels)
from engine.representations.maps import check_tsne, knn_accuracy, tsne_map
from engine.representations.metrics import adjusted_rand, cluster_accuracy, contingency
from engine.representations.shapes import (LINKAGES, METHOD_NAMES, METHODS, SHAPES,
                                           check_clusterable, cluster, make_shape)
from engine.representations.trainer import DECTrainer, Snapshot, kmeans_centres

__all__ = ["AUGMENTATIONS", "Autoencoder", "ContrastiveTrainer", "DECTrainer", "augment",
           "check_augmentations", "check_tsne", "knn_accuracy", "nt_xent", "simclr_features",
           "tsne_map", "LINKAGES", "METHODS", "METHOD_NAMES", "SHAPES",
           "Snapshot", "adjusted_rand", "check_clusterable", "cluster", "cluster_accuracy",
           "contingency", "digit_codes", "digits_pixels", "gradient_terms", "kl_loss",
           "kmeans_centres", "load_autoencoder", "make_shape", "probe_accuracy", "prototypes",
           "pull_toward", "shipped_state", "soft_assign", "spread_labels",
           "target_distribution"]
