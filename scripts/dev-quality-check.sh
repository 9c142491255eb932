echo "quality check: TODO"
