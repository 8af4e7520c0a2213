"""kvplan dashboard from an installed package: the script that ``kvplan serve`` runs."""

from kvplan_app.router import main

main()
