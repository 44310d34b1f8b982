/*
  Warnings:

  - A unique constraint covering the columns `[group_id,import_key]` on the table `expenses` will be added. If there are existing duplicate values, this will fail.
  - A unique constraint covering the columns `[group_id,import_key]` on the table `payments` will be added. If there are existing duplicate values, this will fail.

*/
-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "import_key" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "expenses_group_id_import_key_key" ON "expenses"("group_id", "import_key");

-- CreateIndex
CREATE INDEX "payments_group_id_updated_at_idx" ON "payments"("group_id", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "payments_group_id_import_key_key" ON "payments"("group_id", "import_key");
