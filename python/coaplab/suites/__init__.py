"""The fixed batteries: calibration and reproduction against published figures, the congestion
safety scorecard, the simulator benchmark."""
